package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// monitorLeadership is the one goroutine that watches leadership. It
// always drains the notify channel (raft blocks on it otherwise) and never
// waits on anything else: on gaining leadership it starts leaderLoop, on
// losing it cancels it. A new leader loop starts only after the previous
// one has finished stopping (it waits for it in its own goroutine), so two
// never run at once.
func (n *Node) monitorLeadership(ctx context.Context) {
	var (
		stop func()        // cancels the running leader loop; nil when none
		done chan struct{} // closed when the latest leader loop has ended
	)
	defer func() {
		if stop != nil {
			stop()
		}
		if done != nil {
			<-done
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case isLeader := <-n.notifyCh:
			switch {
			case !isLeader && stop != nil:
				n.log.Info("lost leadership")
				stop()
				stop = nil
			case isLeader && stop == nil:
				n.log.Info("gained leadership")
				lctx, cancel := context.WithCancel(ctx)
				prev := done
				stop, done = cancel, make(chan struct{})
				go func(prev, done chan struct{}) {
					defer close(done)
					if prev != nil {
						<-prev
					}
					n.leaderLoop(lctx)
				}(prev, done)
			}
		}
	}
}

// leaderLoop runs while this node leads: it waits for the Barrier (so the
// state holds every entry committed by earlier leaders), marks the node
// ready for consistent reads, and reconciles gossip membership into the
// raft configuration until leadership ends. The leader-only subsystems
// (Options.LeaderTasks) start after the Barrier and stop with it.
func (n *Node) leaderLoop(ctx context.Context) {
	n.contact.reset()
	for {
		err := n.raft.Barrier(10 * time.Second).Error()
		if err == nil {
			break
		}
		n.log.Warn("leader barrier failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	n.ready.Store(true)
	defer n.ready.Store(false)
	n.log.Info("leader ready", "applied_index", n.state.AppliedIndex())

	// Leader-only subsystems: started now, stopped (and waited for) when
	// leadership ends.
	var tasks sync.WaitGroup
	defer tasks.Wait()
	for _, task := range n.opts.LeaderTasks {
		tasks.Add(1)
		go func() {
			defer tasks.Done()
			task(ctx, n)
		}()
	}

	if n.ml == nil {
		<-ctx.Done()
		return
	}
	r := newReconciler(n)
	tick := time.NewTicker(n.opts.ReconcileInterval)
	defer tick.Stop()
	for {
		r.reconcile(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-n.memberCh:
		}
	}
}

// reconciler makes the raft configuration follow gossip: live servers are
// added as voters; servers gone from gossip, and that raft's heartbeats no
// longer reach, for longer than RemoveGoneAfter are removed, never below a
// quorum of BootstrapExpect. A server raft still reaches is never removed
// because gossip alone lost it.
type reconciler struct {
	n         *Node
	goneSince map[raft.ServerID]time.Time
}

func newReconciler(n *Node) *reconciler {
	return &reconciler{n: n, goneSince: map[raft.ServerID]time.Time{}}
}

func (r *reconciler) reconcile(now time.Time) {
	n := r.n
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		n.log.Warn("reconcile: read configuration", "error", err)
		return
	}
	servers := f.Configuration().Servers
	inConfig := map[raft.ServerID]raft.Server{}
	voters := 0
	for _, s := range servers {
		inConfig[s.ID] = s
		if s.Suffrage == raft.Voter {
			voters++
		}
	}
	for _, m := range n.peers.list() {
		s, ok := inConfig[raft.ServerID(m.ID)]
		if ok && string(s.Address) == m.RaftAddr && s.Suffrage == raft.Voter {
			continue
		}
		n.log.Info("adding server as voter", "node", m.ID, "raft_addr", m.RaftAddr)
		if err := n.raft.AddVoter(raft.ServerID(m.ID), raft.ServerAddress(m.RaftAddr), 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("add voter failed", "node", m.ID, "error", err)
		}
	}
	for _, s := range servers {
		if s.ID == raft.ServerID(n.opts.NodeID) {
			continue
		}
		if _, alive := n.peers.get(string(s.ID)); alive || n.contact.healthy(s.ID) {
			delete(r.goneSince, s.ID)
			continue
		}
		since, seen := r.goneSince[s.ID]
		if !seen {
			r.goneSince[s.ID] = now
			continue
		}
		if !mayRemove(now.Sub(since), n.opts.RemoveGoneAfter, s.Suffrage == raft.Voter, voters, n.opts.BootstrapExpect) {
			continue
		}
		n.log.Warn("removing server gone from gossip and raft", "node", s.ID, "gone_for", now.Sub(since).Round(time.Second))
		if err := n.raft.RemoveServer(s.ID, 0, 10*time.Second).Error(); err != nil {
			n.log.Warn("remove server failed", "node", s.ID, "error", err)
			continue
		}
		delete(r.goneSince, s.ID)
		if s.Suffrage == raft.Voter {
			voters--
		}
	}
}

// mayRemove decides whether a server gone for goneFor may be removed: only
// after the timeout, and never when removing a voter would leave fewer
// voters than a quorum of the expected cluster size.
func mayRemove(goneFor, timeout time.Duration, isVoter bool, voters, expect int) bool {
	if goneFor < timeout {
		return false
	}
	if !isVoter {
		return true
	}
	quorum := max(expect, 1)/2 + 1
	return voters-1 >= quorum
}
