package clustertest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// FaultNet is the network between the nodes of a test cluster. Every
// outgoing connection of a node (raft and node-to-node RPC) goes through
// it, and so does gossip (GossipTransport: packets and streams), so a test
// can cut the links between groups of nodes and heal them: dials across a
// cut fail at once, open connections across it are closed, and gossip
// packets across it are dropped. (The kernel of the test machines has no
// netem.)
type FaultNet struct {
	mu     sync.Mutex
	owner  map[string]int // listen address -> node index
	group  map[int]int    // node index -> partition group; absent = 0
	ggroup map[int]int    // the same for gossip alone (PartitionGossip)
	block  map[string]bool
	delay  map[string]time.Duration // per write to a listen address
	conns  map[*trackedConn]struct{}
}

// NewFaultNet makes a network with no cuts.
func NewFaultNet() *FaultNet {
	return &FaultNet{owner: map[string]int{}, group: map[int]int{}, ggroup: map[int]int{}, block: map[string]bool{}, delay: map[string]time.Duration{}, conns: map[*trackedConn]struct{}{}}
}

// Own records that addr belongs to node i.
func (f *FaultNet) Own(addr string, i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.owner[addr] = i
}

// Partition splits the nodes into the given groups; nodes in no group form
// one more group together. Links between groups are cut.
func (f *FaultNet) Partition(groups ...[]int) {
	f.mu.Lock()
	f.group = groupsOf(groups)
	f.mu.Unlock()
	f.closeCut()
}

// PartitionGossip is Partition for gossip alone: raft and node-to-node RPC
// keep working across the cut.
func (f *FaultNet) PartitionGossip(groups ...[]int) {
	f.mu.Lock()
	f.ggroup = groupsOf(groups)
	f.mu.Unlock()
	f.closeCut()
}

func groupsOf(groups [][]int) map[int]int {
	out := map[int]int{}
	for g, members := range groups {
		for _, i := range members {
			out[i] = g + 1
		}
	}
	return out
}

// closeCut closes the open connections that cross a cut.
func (f *FaultNet) closeCut() {
	f.mu.Lock()
	var cut []*trackedConn
	for c := range f.conns {
		if f.linkCutLocked(c.from, c.to, c.gossip) {
			cut = append(cut, c)
		}
	}
	f.mu.Unlock()
	for _, c := range cut {
		c.Close()
	}
}

// Heal removes every cut, of gossip too.
func (f *FaultNet) Heal() {
	f.mu.Lock()
	f.group, f.ggroup = map[int]int{}, map[int]int{}
	f.mu.Unlock()
}

// Slow delays every write on connections to addr by d (0 removes the
// delay): a slow link, for example to hold a node's catch-up back.
func (f *FaultNet) Slow(addr string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d <= 0 {
		delete(f.delay, addr)
		return
	}
	f.delay[addr] = d
}

// Block cuts every link to addr alone (one listener of a node, say its
// raft port), closing open connections to it; Unblock restores them.
func (f *FaultNet) Block(addr string) {
	f.mu.Lock()
	f.block[addr] = true
	var cut []*trackedConn
	for c := range f.conns {
		if c.to == addr {
			cut = append(cut, c)
		}
	}
	f.mu.Unlock()
	for _, c := range cut {
		c.Close()
	}
}

// Unblock restores the links to addr.
func (f *FaultNet) Unblock(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.block, addr)
}

// linkCutLocked tells whether the link from node from to toAddr is cut,
// for gossip traffic or the rest.
func (f *FaultNet) linkCutLocked(from int, toAddr string, gossip bool) bool {
	if f.block[toAddr] {
		return true
	}
	to, ok := f.owner[toAddr]
	if !ok {
		return false
	}
	return f.group[from] != f.group[to] || (gossip && f.ggroup[from] != f.ggroup[to])
}

// Dialer returns the dial function of node i.
func (f *FaultNet) Dialer(i int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return f.dial(ctx, i, network, addr, false)
	}
}

// dial opens a connection from node i to addr unless the link is cut.
func (f *FaultNet) dial(ctx context.Context, i int, network, addr string, gossip bool) (net.Conn, error) {
	f.mu.Lock()
	cut := f.linkCutLocked(i, addr, gossip)
	f.mu.Unlock()
	if cut {
		return nil, fmt.Errorf("faultnet: link from node %d to %s is cut", i, addr)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, f: f, from: i, to: addr, gossip: gossip}
	f.mu.Lock()
	if f.linkCutLocked(i, addr, gossip) { // cut while dialing
		f.mu.Unlock()
		c.Close()
		return nil, fmt.Errorf("faultnet: link from node %d to %s is cut", i, addr)
	}
	f.conns[tc] = struct{}{}
	f.mu.Unlock()
	return tc, nil
}

type trackedConn struct {
	net.Conn
	f      *FaultNet
	from   int
	to     string
	gossip bool
	once   sync.Once
}

// Write delays by the link's Slow delay, if any.
func (c *trackedConn) Write(p []byte) (int, error) {
	c.f.mu.Lock()
	d := c.f.delay[c.to]
	c.f.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	return c.Conn.Write(p)
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.f.mu.Lock()
		delete(c.f.conns, c)
		c.f.mu.Unlock()
	})
	return c.Conn.Close()
}
