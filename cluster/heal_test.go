package cluster_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// others returns the indexes of the nodes other than n.
func others(c *clustertest.Cluster, n *clustertest.Node) []int {
	var out []int
	for _, o := range c.Nodes {
		if o != n {
			out = append(out, o.Index)
		}
	}
	return out
}

// waitGossip waits until n's gossip sees exactly the members want.
func waitGossip(t *testing.T, n *clustertest.Node, timeout time.Duration, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.Now().Add(timeout)
	for {
		got := n.GossipMembers()
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: gossip members %v, want %v", n.ID(), got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ids(nodes ...*clustertest.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID())
	}
	return out
}

// applyEventually retries a write through n until it succeeds.
func applyEventually(t *testing.T, n *clustertest.Node, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		res, err := n.Apply(clustertest.Context(t, 10*time.Second), createAccount(uuid.NewString()))
		if err == nil {
			if res.GetStatus() != raftv1.Status_STATUS_OK {
				t.Fatalf("write through %s: %v", n.ID(), res)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes through %s still fail: %v", n.ID(), err)
		}
	}
}

// TestGossipAndForwardingHealAfterLongPartition: a follower cut off (raft
// and gossip) long enough that memberlist declares it dead on both sides
// and stops contacting it; after the cut heals, writes through it are
// forwarded to the leader again and gossip is whole again.
func TestGossipAndForwardingHealAfterLongPartition(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3)
	leader := c.Leader(5 * time.Second)
	p := c.Follower()
	var majority []*clustertest.Node
	for _, i := range others(c, p) {
		majority = append(majority, c.Nodes[i])
	}
	c.Net.Partition([]int{p.Index}, others(c, p))
	waitGossip(t, leader, 30*time.Second, ids(majority...)...)
	waitGossip(t, p, 30*time.Second, p.ID())
	// memberlist stops gossiping to members dead for GossipToTheDeadTime
	// (2s with FastGossip): from here on, only a rejoin can heal gossip.
	time.Sleep(4 * time.Second)
	c.Net.Heal()

	applyEventually(t, p, 30*time.Second)
	for _, n := range c.Nodes {
		waitGossip(t, n, 30*time.Second, ids(c.Nodes...)...)
	}
	c.WaitConverged(30 * time.Second)
	if ok, why := p.Healthy(); !ok {
		t.Fatalf("healed node is not healthy: %s", why)
	}
}

// TestVoterLostByGossipAloneIsKept: with gossip cut between a follower and
// the rest while raft still reaches it, the leader does not remove it,
// however short --remove-gone-after is, and writes through it are still
// forwarded to the leader gossip no longer shows it.
func TestVoterLostByGossipAloneIsKept(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3, clustertest.Options{Tune: func(i int, o *cluster.Options) {
		o.RemoveGoneAfter = time.Second
	}})
	leader := c.Leader(5 * time.Second)
	f := c.Follower()
	var rest []*clustertest.Node
	for _, i := range others(c, f) {
		rest = append(rest, c.Nodes[i])
	}
	c.Net.PartitionGossip([]int{f.Index}, others(c, f))
	waitGossip(t, leader, 30*time.Second, ids(rest...)...)
	waitGossip(t, f, 30*time.Second, f.ID())

	// Several times RemoveGoneAfter and the reconcile interval.
	time.Sleep(4 * time.Second)
	st, err := leader.Status(clustertest.Context(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if countVoters(st) != 3 {
		t.Fatalf("a voter raft still reaches was removed: %+v", st)
	}
	mustApply(t, f, createAccount(uuid.NewString()))

	c.Net.Heal()
	for _, n := range c.Nodes {
		waitGossip(t, n, 30*time.Second, ids(c.Nodes...)...)
	}
}

// TestRestartedFollowerIsNotHealthyUntilCaughtUp: a follower restarted
// with a backlog knows the leader (raft heartbeats reach it, slowly) long
// before it has applied what it missed; /health's Healthy must not say yes
// until it has applied everything the leader had applied.
func TestRestartedFollowerIsNotHealthyUntilCaughtUp(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3)
	f := c.Follower()
	raftAddr := f.RaftAddr()
	c.Kill(f.Index)
	leader := c.Leader(5 * time.Second)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 32 {
				if _, err := leader.Apply(clustertest.Context(t, 15*time.Second), createAccount(uuid.NewString())); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	target := leader.State().AppliedIndex()

	// Every raft write to the node is slow, so it catches up in several
	// slow batches while heartbeats already tell it who leads.
	c.Net.Slow(raftAddr, 100*time.Millisecond)
	c.Restart(f.Index)
	n := c.Nodes[f.Index]
	sawBehind := false
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, why := n.Healthy()
		applied := n.State().AppliedIndex()
		if ok {
			if applied < target {
				t.Fatalf("healthy at applied index %d, before catching up to %d", applied, target)
			}
			break
		}
		if n.Leader() != "" && applied < target {
			sawBehind = true
			if why != "catching up" {
				t.Fatalf("unhealthy while behind with reason %q, want \"catching up\"", why)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy in time: %s (applied %d of %d)", why, applied, target)
		}
		time.Sleep(2 * time.Millisecond)
	}
	c.Net.Slow(raftAddr, 0)
	if !sawBehind {
		t.Fatal("the node never knew a leader while behind: the test did not test anything")
	}
}

// TestNodesBoundToAllInterfacesAdvertiseReachableAddresses: nodes that
// bind 0.0.0.0 advertise 127.0.0.1 for raft, HTTP and gossip, and cluster.
func TestNodesBoundToAllInterfacesAdvertiseReachableAddresses(t *testing.T) {
	c := clustertest.NewCluster(t, 3, clustertest.Options{BindAll: true})
	mustApply(t, c.Follower(), createAccount(uuid.NewString()))
	st, err := c.Follower().Status(clustertest.Context(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Nodes) != 3 {
		t.Fatalf("status %+v", st)
	}
	for _, s := range st.Nodes {
		if !strings.HasPrefix(s.RaftAddr, "127.0.0.1:") || !strings.HasPrefix(s.HTTPAddr, "127.0.0.1:") || s.Role == "gone" || !s.Voter {
			t.Fatalf("node %+v: want advertised 127.0.0.1 addresses, a live voter", s)
		}
	}
	for _, n := range c.Nodes {
		if !strings.HasPrefix(n.GossipAddr(), "127.0.0.1:") {
			t.Fatalf("%s gossips as %s", n.ID(), n.GossipAddr())
		}
	}
}
