package cluster

import "lookout/cluster/clusterapi"

// The sentinel errors of the cluster, defined in clusterapi so that the HTTP
// layers can test them without importing this package (and raft).
var (
	// ErrNotLeader: this node is not the leader (and so cannot do what was
	// asked itself). Apply and ConsistentRead handle it by forwarding.
	ErrNotLeader = clusterapi.ErrNotLeader
	// ErrNoLeader: the cluster has no leader this node knows of, even after
	// waiting. HTTP layers answer 503.
	ErrNoLeader = clusterapi.ErrNoLeader
	// ErrShutdown: the node is shutting down.
	ErrShutdown = clusterapi.ErrShutdown
)
