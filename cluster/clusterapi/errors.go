// Package clusterapi is what the layers above the cluster share with it
// without importing it (and so raft): the sentinel errors every layer tests
// with errors.Is, and the cluster status the operator API serves. It
// imports nothing of the project.
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
