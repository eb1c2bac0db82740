package cluster

import (
	"context"
	"slices"
	"time"
)

// rejoinLoop keeps gossip whole. First it meets the --join addresses,
// retrying with backoff until one answers, so nodes can be started in any
// order. Then, every RejoinInterval, while a server of the raft
// configuration (or, before this node has one, any server gossip ever
// saw) is not alive in gossip, it joins again the last-known gossip
// addresses of those servers and the --join addresses, the way Serf
// reconnects failed members. memberlist stops contacting a member soon
// after declaring it dead, and the member does the same, so without this
// two sides of a long partition would never meet again.
func (n *Node) rejoinLoop(ctx context.Context) {
	log := n.log.Named("join")
	for wait := 500 * time.Millisecond; len(n.opts.Join) > 0; wait = min(wait*2, 10*time.Second) {
		joined, err := n.ml.Join(n.opts.Join)
		if joined > 0 {
			log.Info("joined gossip", "contacted", joined)
			break
		}
		log.Warn("could not join yet; retrying", "join", n.opts.Join, "error", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	tick := time.NewTicker(n.opts.RejoinInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		addrs := n.rejoinAddrs()
		if len(addrs) == 0 {
			continue
		}
		joined, err := n.ml.Join(addrs)
		log.Debug("rejoin attempt", "addrs", addrs, "contacted", joined, "error", err)
		if joined > 0 {
			n.memberChanged()
		}
	}
}

// rejoinAddrs is where to look for the servers gossip lost: nothing when
// none is lost, else their last-known gossip addresses and the --join
// addresses.
func (n *Node) rejoinAddrs() []string {
	var ids []string
	if f := n.raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			ids = append(ids, string(s.ID))
		}
	}
	if len(ids) == 0 {
		ids = n.peers.knownIDs()
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == n.opts.NodeID })
	addrs, unknown := n.peers.lost(ids)
	if len(addrs) == 0 && !unknown {
		return nil
	}
	self := n.GossipAddr()
	addrs = slices.DeleteFunc(append(addrs, n.opts.Join...), func(a string) bool { return a == self })
	slices.Sort(addrs)
	return slices.Compact(addrs)
}
