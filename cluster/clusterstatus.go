package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// statusTimeout bounds the status call to each node.
const statusTimeout = time.Second

// Status reports every node of the cluster: the servers of the raft
// configuration as this node knows it, then live gossip members raft has
// not added yet. Each node is asked for its own view at its last-known
// address; a node that does not answer, or that gossip never saw, is
// "gone". It needs no leader.
func (n *Node) Status(ctx context.Context) (Status, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return Status{}, raftError(err)
	}
	out := Status{Leader: n.Leader()}
	seen := map[string]bool{}
	for _, s := range f.Configuration().Servers {
		seen[string(s.ID)] = true
		out.Nodes = append(out.Nodes, ServerStatus{ID: string(s.ID), RaftAddr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	for _, m := range n.peers.list() {
		if !seen[m.ID] {
			out.Nodes = append(out.Nodes, ServerStatus{ID: m.ID, RaftAddr: m.RaftAddr})
		}
	}
	var wg sync.WaitGroup
	for i := range out.Nodes {
		wg.Add(1)
		go func(s *ServerStatus) {
			defer wg.Done()
			n.fillStatus(ctx, s)
		}(&out.Nodes[i])
	}
	wg.Wait()
	return out, nil
}

// fillStatus asks one node for its role, contact and applied index.
func (n *Node) fillStatus(ctx context.Context, s *ServerStatus) {
	s.Role, s.LastContactMs = "gone", -1
	if s.ID == n.opts.NodeID {
		s.HTTPAddr = n.opts.HTTPAddr
		st := n.localStatus()
		s.Role, s.LastContactMs, s.AppliedIndex = st.GetState(), st.GetLastContactMs(), st.GetAppliedIndex()
		return
	}
	m, known := n.peers.lastKnown(s.ID)
	if !known {
		return
	}
	s.HTTPAddr = m.HTTPAddr
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	st, err := n.rpc.status(ctx, m.HTTPAddr)
	if err != nil {
		return
	}
	s.Role, s.LastContactMs, s.AppliedIndex = st.GetState(), st.GetLastContactMs(), st.GetAppliedIndex()
}
