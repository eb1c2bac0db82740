package main

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Net is the fault layer between the nodes: a set of cut links (pairs of
// node ids) that every Proxy consults for each connection it carries. A
// cut link either holds its traffic (a black hole: bytes wait, as TCP
// retransmits through lost packets, and flow again after the heal unless
// the peers gave up) or drops it (open connections are closed and new
// ones closed on arrival, as a firewall's REJECT).
type Net struct {
	mu      sync.Mutex
	cut     map[link]bool // true: drop, false: hold
	changed chan struct{} // closed and replaced on every change
	conns   map[*pconn]struct{}
}

// link is an unordered pair of node ids.
type link struct{ a, b string }

func mkLink(a, b string) link {
	if a > b {
		a, b = b, a
	}
	return link{a, b}
}

// NewNet returns a fault layer with every link up.
func NewNet() *Net {
	return &Net{cut: map[link]bool{}, changed: make(chan struct{}), conns: map[*pconn]struct{}{}}
}

// Isolate cuts id from each of others, both ways; with drop the open
// connections across the cut are closed.
func (n *Net) Isolate(id string, others []string, drop bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, o := range others {
		if o != id {
			n.cut[mkLink(id, o)] = drop
		}
	}
	if drop {
		for c := range n.conns {
			if _, ok := n.cut[mkLink(c.from, c.to)]; ok {
				c.close()
			}
		}
	}
	n.notify()
}

// Heal restores every link; held traffic flows again.
func (n *Net) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut = map[link]bool{}
	n.notify()
}

func (n *Net) notify() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// state tells whether from-to is cut (and then whether it drops) and
// returns a channel closed on the next change.
func (n *Net) state(from, to string) (cut, drop bool, changed <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	drop, cut = n.cut[mkLink(from, to)]
	return cut, drop, n.changed
}

// pass blocks while from-to holds its traffic; false means the traffic is
// dropped (or done was closed) and the connection should go.
func (n *Net) pass(from, to string, done <-chan struct{}) bool {
	for {
		cut, drop, changed := n.state(from, to)
		switch {
		case !cut:
			return true
		case drop:
			return false
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

// Proxy forwards the TCP connections accepted on its listener to one
// node's real port, through the faults of its Net. The peer that dialed
// is identified by owner (a node id); the node behind the proxy is node.
type Proxy struct {
	node   string
	target string
	ln     net.Listener
	net    *Net
	owner  func(net.Conn) (string, error)
	wg     sync.WaitGroup

	// Counters: connections carried, refused because the link dropped,
	// closed because their dialer could not be identified.
	Carried, Dropped, Unknown atomic.Int64
	lastUnknown               atomic.Value // string: why the last unidentified one was
}

// NewProxy listens on 127.0.0.1 (a free port) in front of target, the
// real address of node.
func NewProxy(n *Net, node, target string, owner func(net.Conn) (string, error)) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{node: node, target: target, ln: ln, net: n, owner: owner}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the address peers dial (the node advertises it).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting and waits for the accept loop; open connections
// are closed by the Net's owner through CloseAll.
func (p *Proxy) Close() {
	p.ln.Close()
	p.wg.Wait()
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

// handle identifies the dialer, waits while its link to the node holds,
// then pipes both ways.
func (p *Proxy) handle(c net.Conn) {
	from, err := p.identify(c)
	if err != nil {
		p.Unknown.Add(1)
		p.lastUnknown.Store(err.Error())
		c.Close()
		return
	}
	// A new connection across a holding cut waits here (its dialer
	// times out meanwhile, as it would with its SYN lost).
	if !p.net.pass(from, p.node, nil) {
		p.Dropped.Add(1)
		c.Close()
		return
	}
	d, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil { // the node is down: its port refuses
		c.Close()
		return
	}
	p.Carried.Add(1)
	pc := &pconn{from: from, to: p.node, a: c, b: d, done: make(chan struct{})}
	if !p.net.add(pc) {
		pc.close()
		return
	}
	go p.pipe(pc, c, d)
	p.pipe(pc, d, c)
	p.net.remove(pc)
}

// identify asks the kernel which node holds the dialing socket, a few
// times (the lookup races the dialer's bookkeeping only in theory).
func (p *Proxy) identify(c net.Conn) (string, error) {
	var err error
	for i := 0; i < 5; i++ {
		var id string
		if id, err = p.owner(c); err == nil {
			return id, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", err
}

// pipe copies src to dst, each chunk after the link lets it pass.
func (p *Proxy) pipe(pc *pconn, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.net.pass(pc.from, pc.to, pc.done) {
				pc.close()
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				pc.close()
				return
			}
		}
		if err != nil {
			pc.close()
			return
		}
	}
}

// pconn is one proxied connection: a (from the dialer) and b (to the
// node).
type pconn struct {
	from, to string
	a, b     net.Conn
	once     sync.Once
	done     chan struct{}
}

func (c *pconn) close() {
	c.once.Do(func() {
		close(c.done)
		c.a.Close()
		c.b.Close()
	})
}

// add registers a live connection; false when its link drops.
func (n *Net) add(c *pconn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if drop, cut := n.cut[mkLink(c.from, c.to)]; cut && drop {
		return false
	}
	n.conns[c] = struct{}{}
	return true
}

func (n *Net) remove(c *pconn) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.conns, c)
}

// CloseAll closes every proxied connection.
func (n *Net) CloseAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for c := range n.conns {
		c.close()
	}
}
