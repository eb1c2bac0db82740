package clustertest

import (
	"context"
	"net"
	"time"

	"github.com/hashicorp/memberlist"
)

// GossipTransport returns the cluster.Options.WrapGossip of node i: its
// memberlist traffic crosses the FaultNet, so Partition and
// PartitionGossip cut gossip too. Packets across a cut are dropped
// silently (as a lost UDP datagram would be), stream dials across it fail,
// and open streams across it are closed.
func (f *FaultNet) GossipTransport(i int) func(memberlist.NodeAwareTransport) memberlist.NodeAwareTransport {
	return func(inner memberlist.NodeAwareTransport) memberlist.NodeAwareTransport {
		return &gossipTransport{NodeAwareTransport: inner, f: f, i: i}
	}
}

// gossipTransport is memberlist's transport of one node behind the
// FaultNet. Only what the node sends is filtered: every node of a test
// cluster has one, so a cut holds both ways.
type gossipTransport struct {
	memberlist.NodeAwareTransport
	f *FaultNet
	i int
}

func (t *gossipTransport) cut(addr string) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.linkCutLocked(t.i, addr, true)
}

// WriteTo sends a packet unless the link is cut.
func (t *gossipTransport) WriteTo(b []byte, addr string) (time.Time, error) {
	if t.cut(addr) {
		return time.Now(), nil
	}
	return t.NodeAwareTransport.WriteTo(b, addr)
}

// WriteToAddress sends a packet unless the link is cut.
func (t *gossipTransport) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	if t.cut(a.Addr) {
		return time.Now(), nil
	}
	return t.NodeAwareTransport.WriteToAddress(b, a)
}

// DialTimeout opens a stream unless the link is cut.
func (t *gossipTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return t.f.dial(ctx, t.i, "tcp", addr, true)
}

// DialAddressTimeout opens a stream unless the link is cut.
func (t *gossipTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	return t.DialTimeout(a.Addr, timeout)
}
