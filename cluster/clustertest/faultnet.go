package clustertest

import (
	"context"
	"fmt"
	"net"
	"sync"
)

// FaultNet is the network between the nodes of a test cluster. Every
// outgoing connection of a node (raft and node-to-node RPC) goes through
// it, so a test can cut the links between groups of nodes and heal them:
// dials across a cut fail at once, and open connections across it are
// closed. (The kernel of the test machines has no netem.)
type FaultNet struct {
	mu    sync.Mutex
	owner map[string]int // listen address -> node index
	group map[int]int    // node index -> partition group; absent = 0
	block map[string]bool
	conns map[*trackedConn]struct{}
}

// NewFaultNet makes a network with no cuts.
func NewFaultNet() *FaultNet {
	return &FaultNet{owner: map[string]int{}, group: map[int]int{}, block: map[string]bool{}, conns: map[*trackedConn]struct{}{}}
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
	f.group = map[int]int{}
	for g, members := range groups {
		for _, i := range members {
			f.group[i] = g + 1
		}
	}
	var cut []*trackedConn
	for c := range f.conns {
		if f.cutLocked(c.from, c.to) {
			cut = append(cut, c)
		}
	}
	f.mu.Unlock()
	for _, c := range cut {
		c.Close()
	}
}

// Heal removes every cut.
func (f *FaultNet) Heal() { f.Partition() }

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

func (f *FaultNet) cutLocked(from int, toAddr string) bool {
	if f.block[toAddr] {
		return true
	}
	to, ok := f.owner[toAddr]
	if !ok {
		return false
	}
	return f.group[from] != f.group[to]
}

// Dialer returns the dial function of node i.
func (f *FaultNet) Dialer(i int) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		f.mu.Lock()
		cut := f.cutLocked(i, addr)
		f.mu.Unlock()
		if cut {
			return nil, fmt.Errorf("faultnet: link from node %d to %s is cut", i, addr)
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, f: f, from: i, to: addr}
		f.mu.Lock()
		if f.cutLocked(i, addr) { // cut while dialing
			f.mu.Unlock()
			c.Close()
			return nil, fmt.Errorf("faultnet: link from node %d to %s is cut", i, addr)
		}
		f.conns[tc] = struct{}{}
		f.mu.Unlock()
		return tc, nil
	}
}

type trackedConn struct {
	net.Conn
	f    *FaultNet
	from int
	to   string
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.f.mu.Lock()
		delete(c.f.conns, c)
		c.f.mu.Unlock()
	})
	return c.Conn.Close()
}
