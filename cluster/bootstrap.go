package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// bootstrapLoop bootstraps the cluster once BootstrapExpect servers have
// met. Exactly one node bootstraps: the one with the lowest id among them,
// with all of them as voters; the others receive the configuration from the
// leader it elects. Like nomad's maybeBootstrap, a node never bootstraps
// when its own log is not empty (checked before starting this loop) or when
// any peer already has a raft configuration.
func (n *Node) bootstrapLoop(ctx context.Context) {
	log := n.log.Named("bootstrap")
	if n.opts.BootstrapExpect == 1 && n.ml == nil {
		n.bootstrap([]nodeMeta{n.self()})
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n.hasPeers() {
			log.Info("raft configuration present; not bootstrapping")
			return
		}
		members := n.peers.list()
		if len(members) < n.opts.BootstrapExpect {
			continue
		}
		if members[0].ID != n.opts.NodeID {
			continue // the lowest id bootstraps; wait to be contacted
		}
		has, err := n.peerHasPeers(ctx, members)
		if err != nil {
			log.Warn("cannot ask every peer for its raft configuration yet", "error", err)
			continue
		}
		if has {
			log.Info("a peer already has a raft configuration; not bootstrapping")
			return
		}
		n.bootstrap(members)
		return
	}
}

// bootstrap starts the cluster with members as its voters.
func (n *Node) bootstrap(members []nodeMeta) {
	cfg := raft.Configuration{}
	for _, m := range members {
		cfg.Servers = append(cfg.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.RaftAddr)})
	}
	if err := n.raft.BootstrapCluster(cfg).Error(); err != nil {
		n.log.Error("bootstrap failed", "error", err)
		return
	}
	n.log.Info("bootstrapped the cluster", "servers", len(cfg.Servers))
}

// hasPeers tells whether this node's raft configuration has any server.
func (n *Node) hasPeers() bool {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return false
	}
	return len(f.Configuration().Servers) > 0
}

// peerHasPeers asks every other member whether it has a raft
// configuration. A member that does not answer is an error: the caller
// waits for the next round rather than risk a second cluster.
func (n *Node) peerHasPeers(ctx context.Context, members []nodeMeta) (bool, error) {
	for _, m := range members {
		if m.ID == n.opts.NodeID {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		st, err := n.rpc.status(cctx, m.HTTPAddr)
		cancel()
		if err != nil {
			return false, fmt.Errorf("peer %s: %w", m.ID, err)
		}
		if st.GetHasPeers() {
			return true, nil
		}
	}
	return false, nil
}
