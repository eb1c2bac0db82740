// Package clusterapi is what the layers around the cluster share with it
// without importing it (and so raft): the sentinel errors every layer tests
// with errors.Is, the cluster status the operator API serves, and the entry
// and snapshot types of the state machine the node drives. It imports
// nothing of the project but the generated command types.
package clusterapi

import "errors"

// The sentinel errors of the cluster, shared by every layer so that
// errors.Is works from raft up to the HTTP handlers.
var (
	// ErrNotLeader: this node is not the leader (and so cannot do what was
	// asked itself). Apply and ConsistentRead handle it by forwarding.
	ErrNotLeader = errors.New("not the raft leader")
	// ErrNoLeader: the cluster has no leader this node knows of, even after
	// waiting. HTTP layers answer 503.
	ErrNoLeader = errors.New("no raft leader")
	// ErrShutdown: the node is shutting down.
	ErrShutdown = errors.New("node is shutting down")
)
