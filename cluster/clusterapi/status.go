package clusterapi

// Status is the cluster as one node sees it, the body of
// GET /admin/v1/cluster.
type Status struct {
	// Leader is the node id of the leader, empty when there is none.
	Leader string `json:"leader"`
	// Nodes lists every server of the raft configuration, then nodes that
	// gossip has seen but raft has not added yet.
	Nodes []ServerStatus `json:"nodes"`
}

// ServerStatus is one node of the cluster.
type ServerStatus struct {
	ID       string `json:"id"`
	HTTPAddr string `json:"http_addr"`
	RaftAddr string `json:"raft_addr"`
	// Role is leader, follower, candidate, or gone (not reachable).
	Role  string `json:"role"`
	Voter bool   `json:"voter"`
	// LastContactMs is how long ago the node last heard from the leader
	// (0 for the leader itself; -1 when unknown).
	LastContactMs int64 `json:"last_contact_ms"`
	// AppliedIndex is the last raft index applied to the node's state.
	AppliedIndex uint64 `json:"applied_index"`
}
