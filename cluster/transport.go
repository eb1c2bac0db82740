package cluster

import (
	"context"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// DialFunc opens a connection; tests pass one that injects faults.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// streamLayer is raft's TCP stream layer with a pluggable dialer, so tests
// can cut and heal links between nodes (the kernel here has no netem).
type streamLayer struct {
	net.Listener
	dial DialFunc
}

var _ raft.StreamLayer = (*streamLayer)(nil)

// Dial opens a raft connection to address.
func (s *streamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.dial(ctx, "tcp", string(address))
}
