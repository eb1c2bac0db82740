package cluster

import (
	"context"
	"time"
)

// catchUpLoop runs once at start: as soon as a leader is known it asks it
// for its applied index (the ReadIndex of ConsistentRead) and waits until
// this node's state has applied that far; only then may Healthy report
// the node healthy. A node restarted with a backlog would otherwise say
// healthy while it still misses writes every other node has (and, for
// example, does not know keys created while it was down).
func (n *Node) catchUpLoop(ctx context.Context) {
	for wait := 100 * time.Millisecond; ; wait = min(wait*2, 2*time.Second) {
		err := n.ConsistentRead(ctx)
		if err == nil {
			n.caughtUp.Store(true)
			n.log.Info("caught up with the leader", "applied_index", n.state.AppliedIndex())
			return
		}
		n.log.Debug("cannot learn the leader's index yet; retrying", "error", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
