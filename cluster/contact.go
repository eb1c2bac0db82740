package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// raftContact follows the leader's raft heartbeats to each server, as raft
// reports them: a server is failing from its first failed heartbeat until
// raft reports that heartbeats resumed. The leader uses it so that a server
// gossip lost but raft still reaches is not removed (gossip and raft can
// fail apart: a blocked UDP port, a gossip partition that has not healed).
type raftContact struct {
	mu      sync.Mutex
	failing map[raft.ServerID]struct{}
}

func newRaftContact() *raftContact {
	return &raftContact{failing: map[raft.ServerID]struct{}{}}
}

// reset forgets every failure; called when this node becomes leader, since
// the observations of an earlier term say nothing about this one (raft
// reports a resumption only after failures in the same term).
func (c *raftContact) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.failing)
}

// healthy tells whether the leader's heartbeats to id are not failing.
func (c *raftContact) healthy(id raft.ServerID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, failing := c.failing[id]
	return !failing
}

func (c *raftContact) observe(o any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch o := o.(type) {
	case raft.FailedHeartbeatObservation:
		c.failing[o.PeerID] = struct{}{}
	case raft.ResumedHeartbeatObservation:
		delete(c.failing, o.PeerID)
	}
}

// watchHeartbeats registers a raft observer of heartbeat failures and
// resumptions, and of leader changes (counted in Options.Metrics). It blocks raft's heartbeat goroutine until the observation
// is taken (a dropped resumption would leave a healthy server failing), so
// the goroutine taking them runs until raft has shut down.
func (n *Node) watchHeartbeats() {
	ch := make(chan raft.Observation, 16)
	obs := raft.NewObserver(ch, true, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.LeaderObservation:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(obs)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		var leader raft.ServerID // the last leader raft reported
		for {
			select {
			case o := <-ch:
				if l, ok := o.Data.(raft.LeaderObservation); ok {
					if l.LeaderID != "" && l.LeaderID != leader {
						n.opts.Metrics.LeaderChange()
					}
					if l.LeaderID != "" {
						n.leaders.named()
					}
					leader = l.LeaderID
					continue
				}
				n.contact.observe(o.Data)
			case <-n.raftDone:
				n.raft.DeregisterObserver(obs)
				return
			}
		}
	}()
}
