package httpserver

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The connection caps. One listener serves the public APIs and the RPC of
// other nodes and of agents (a path prefix tells them apart), and a flood
// of public connections must not keep RPC out: raft's write forwarding and
// the agents' streams go through it. So the listener accepts up to
// MaxConnections public connections plus RPCConnections more, and a
// connection is public until the RPC handler has authenticated a request
// on it (MarkRPC; an RPC path alone is not enough). From then on it counts
// against neither share and gives its slot back: RPC connections are
// bounded by the nodes and agents that hold credentials, and an RPC
// client reuses its connection for everything.
//
// A connection accepted while the public share is full is on probation:
// it holds one of the reserved slots, and it keeps it only if it sends an
// RPC request. A public request on it waits for a public connection to
// close (as it would have waited in the listen backlog) and is answered
// 503 with Retry-After if none does before ProbationTimeout from the
// connection's accept; a probation connection that sends no RPC request
// by then is closed. So a client that opens connections and sends nothing
// holds a reserved slot for ProbationTimeout at most, and a new RPC
// connection finds one free as soon as one such timeout passes.
// Connections beyond both shares wait in the listen backlog.

// connClass is what a connection is known to be.
type connClass int

const (
	classPublic    connClass = iota // within the public share, or known public
	classProbation                  // accepted beyond the public share, not yet RPC
	classRPC                        // sent an RPC request
)

// connCounts counts the open connections by class.
type connCounts struct {
	maxPublic int

	mu        sync.Mutex
	public    int
	probation int
	rpc       int
	// freed is closed (and replaced) when a public slot frees.
	freed chan struct{}
}

// admit classifies a connection just accepted.
func (c *connCounts) admit() connClass {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.public < c.maxPublic {
		c.public++
		return classPublic
	}
	c.probation++
	return classProbation
}

// leaveLocked removes one connection of class k.
func (c *connCounts) leaveLocked(k connClass) {
	switch k {
	case classPublic:
		c.public--
		close(c.freed)
		c.freed = make(chan struct{})
	case classProbation:
		c.probation--
	case classRPC:
		c.rpc--
	}
}

// capListener accepts at most max connections at once (public share and
// reserve), each a *trackedConn.
type capListener struct {
	net.Listener
	sem       chan struct{}
	counts    *connCounts
	probation time.Duration
	done      chan struct{}
	closeOnce sync.Once
}

func newCapListener(ln net.Listener, maxPublic, reserve int, probation time.Duration) *capListener {
	return &capListener{
		Listener:  ln,
		sem:       make(chan struct{}, maxPublic+reserve),
		counts:    &connCounts{maxPublic: maxPublic, freed: make(chan struct{})},
		probation: probation,
		done:      make(chan struct{}),
	}
}

// Accept waits for a free slot, then for a connection.
func (l *capListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	now := time.Now()
	t := &trackedConn{Conn: c, l: l, class: l.counts.admit(), accepted: now}
	if t.class == classProbation {
		t.ends = now.Add(l.probation)
		t.timer = time.AfterFunc(l.probation, t.probationOver)
	}
	return t, nil
}

// Close closes the listener; connections already accepted stay open.
func (l *capListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// trackedConn is an accepted connection and its class.
type trackedConn struct {
	net.Conn
	l        *capListener
	accepted time.Time

	// class, timer, ends, waiting and closed are guarded by l.counts.mu.
	class  connClass
	timer  *time.Timer
	closed bool
	// ends is when the probation ends: the timer fires then, and a firing
	// that finds it moved on (rearm) is a stale one and does nothing.
	ends time.Time
	// waiting counts the public requests waiting for a public slot: the
	// probation timer leaves the connection to them (they answer 503).
	waiting int
}

// Close closes the connection and frees its slot (once).
func (t *trackedConn) Close() error {
	err := t.Conn.Close()
	c := t.l.counts
	c.mu.Lock()
	if !t.closed {
		t.closed = true
		c.leaveLocked(t.class)
		if t.timer != nil {
			t.timer.Stop()
		}
		if t.class != classRPC {
			<-t.l.sem
		}
	}
	c.mu.Unlock()
	return err
}

// probationOver closes a connection still on probation, unless a public
// request on it is waiting (it answers, then calls rearm) or rearm has
// moved the end of the probation since this firing was due (a timer that
// had fired, but not yet run, when rearm reset it).
func (t *trackedConn) probationOver() {
	c := t.l.counts
	c.mu.Lock()
	over := t.class == classProbation && !t.closed && t.waiting == 0 && !time.Now().Before(t.ends)
	c.mu.Unlock()
	if over {
		t.Close()
	}
}

// rearm ends the wait of a request claimPublic turned away, once it is
// answered, and closes the connection a probation later if it is still on
// probation then (after a 503, which an HTTP/2 connection survives).
func (t *trackedConn) rearm() {
	c := t.l.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	t.waiting--
	if t.timer != nil && t.class == classProbation {
		t.ends = time.Now().Add(t.l.probation)
		t.timer.Reset(t.l.probation)
	}
}

// becomeRPC moves the connection to the RPC class.
func (t *trackedConn) becomeRPC() {
	c := t.l.counts
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.class == classRPC || t.closed {
		return
	}
	c.leaveLocked(t.class)
	t.class = classRPC
	c.rpc++
	if t.timer != nil {
		t.timer.Stop()
	}
	<-t.l.sem // its slot goes back to the public share or the reserve
}

// claimPublic waits, until the connection's probation ends or ctx does,
// for a public slot; it reports whether the connection now holds one (or
// is no longer on probation). When it reports false the request still
// counts as waiting, so that the probation timer, which fires at the same
// moment, leaves the connection open for the 503: the caller answers,
// then calls rearm.
func (t *trackedConn) claimPublic(ctx context.Context) bool {
	c := t.l.counts
	c.mu.Lock()
	if t.class != classProbation {
		c.mu.Unlock()
		return true
	}
	t.waiting++
	c.mu.Unlock()
	deadline := time.NewTimer(time.Until(t.accepted.Add(t.l.probation)))
	defer deadline.Stop()
	for {
		c.mu.Lock()
		if t.class != classProbation {
			t.waiting--
			c.mu.Unlock()
			return !t.closed
		}
		if c.public < c.maxPublic {
			c.probation--
			c.public++
			t.class = classPublic
			t.timer.Stop()
			t.waiting--
			c.mu.Unlock()
			return true
		}
		freed := c.freed
		c.mu.Unlock()
		select {
		case <-freed:
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

type connKey struct{}

// connContext keeps the request's *trackedConn in its context.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if t, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, t)
	}
	return ctx
}

// isRPC tells whether r is an RPC request (one of prefixes).
func isRPC(r *http.Request, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(r.URL.Path, p) {
			return true
		}
	}
	return false
}

// MarkRPC tells the server that the connection of the request with ctx
// carries authenticated RPC (node-to-node or agent): from then on it
// counts against neither the public share nor the probation of the
// reserve. The RPC handlers call it once the caller is authenticated, so
// an unauthenticated request on an RPC path cannot take a connection out
// of the public cap. Outside a Server it does nothing.
func MarkRPC(ctx context.Context) {
	if t, ok := ctx.Value(connKey{}).(*trackedConn); ok {
		t.becomeRPC()
	}
}

// classify makes a public request on a probation connection wait for a
// public slot (503 when none frees in time). A request on an RPC path
// goes on: its handler calls MarkRPC once the caller is authenticated.
func classify(h http.Handler, prefixes []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, _ := r.Context().Value(connKey{}).(*trackedConn)
		if t != nil && !isRPC(r, prefixes) && !t.claimPublic(r.Context()) {
			defer t.rearm()
			w.Header().Set("Connection", "close")
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"too many connections; try again"}` + "\n"))
			return
		}
		h.ServeHTTP(w, r)
	})
}
