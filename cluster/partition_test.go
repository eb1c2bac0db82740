package cluster_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestPartitionedLeaderNeverAcknowledgesAndClusterConverges(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3)
	before := uuid.NewString()
	mustApply(t, c.Follower(), createAccount(before))

	old := c.Leader(5 * time.Second)
	var majority []*clustertest.Node
	var majorityIdx []int
	for _, n := range c.Nodes {
		if n != old {
			majority = append(majority, n)
			majorityIdx = append(majorityIdx, n.Index)
		}
	}
	c.Net.Partition([]int{old.Index}, majorityIdx)

	// The majority elects a leader of its own and accepts writes.
	newLeader, err := c.WaitLeader(10*time.Second, majority...)
	if err != nil {
		t.Fatal(err)
	}
	var acked []string
	for i := 0; i < 5; i++ {
		id := uuid.NewString()
		mustApply(t, majority[i%2], createAccount(id))
		acked = append(acked, id)
	}

	// The old leader, cut off, answers a write with ErrNoLeader (503) and
	// never acknowledges it.
	lost := uuid.NewString()
	res, err := old.Apply(clustertest.Context(t, 20*time.Second), createAccount(lost))
	if !errors.Is(err, cluster.ErrNoLeader) {
		t.Fatalf("write on the minority: result %v, error %v; want ErrNoLeader", res, err)
	}
	if err := old.ConsistentRead(clustertest.Context(t, 20*time.Second)); !errors.Is(err, cluster.ErrNoLeader) {
		t.Fatalf("consistent read on the minority: %v; want ErrNoLeader", err)
	}

	// Heal: every node converges on the majority's history.
	c.Net.Heal()
	c.WaitConverged(30 * time.Second)
	for _, n := range c.Nodes {
		requireAccounts(t, n, append([]string{before}, acked...))
		if _, err := n.State().Account(lost); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("%s has the unacknowledged account: %v", n.ID(), err)
		}
	}
	_ = newLeader
}

func TestNodeDownDuringCompactionGetsSnapshot(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3, clustertest.Options{Tune: func(i int, o *cluster.Options) {
		o.Raft.SnapshotThreshold = 20
		o.Raft.SnapshotInterval = 100 * time.Millisecond
		o.Raft.TrailingLogs = 5
		o.Raft.LogSegmentBytes = 8 << 10 // compaction drops the entries the node misses
	}})
	down := c.Follower()
	c.Kill(down.Index)
	leader := c.Leader(5 * time.Second)
	var ids []string
	for i := 0; i < 60; i++ {
		id := uuid.NewString()
		mustApply(t, leader, createAccount(id))
		ids = append(ids, id)
	}
	// Wait for the leader to snapshot and drop the log the node missed.
	waitSnapshot(t, leader, 31, 20*time.Second, "the leader did not snapshot")
	c.Restart(down.Index)
	c.WaitConverged(30 * time.Second)
	// The state reaches the leader's index inside the restore, a moment
	// before raft records the snapshot it installed: wait for that record.
	// A node that caught up through the log never gets one.
	waitSnapshot(t, down, 1, 10*time.Second, "the restarted node caught up without a snapshot")
	requireAccounts(t, down, ids)
	// It keeps up afterwards through the log.
	id := uuid.NewString()
	mustApply(t, down, createAccount(id))
	requireAccounts(t, down, []string{id})
}

// waitSnapshot waits up to timeout for raft on n to record a snapshot of
// index at least min, and fails the test with what otherwise.
func waitSnapshot(t *testing.T, n *clustertest.Node, min uint64, timeout time.Duration, what string) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if idx, _ := strconv.ParseUint(n.RaftStats()["last_snapshot_index"], 10, 64); idx >= min {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, n.RaftStats())
		}
	}
}

func TestGoneServerIsRemovedAndRejoins(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3, clustertest.Options{Tune: func(i int, o *cluster.Options) {
		o.RemoveGoneAfter = time.Second
	}})
	gone := c.Follower()
	goneID := gone.ID()
	c.Kill(gone.Index)
	leader := c.Leader(5 * time.Second)
	waitServers(t, leader, 2, 30*time.Second)

	// Removing another would leave fewer voters than a quorum of three: the
	// pure rule is tested in leader_test.go; here, the node comes back and
	// is a voter again without any operator step.
	c.Restart(gone.Index)
	waitServers(t, leader, 3, 30*time.Second)
	c.WaitConverged(30 * time.Second)
	id := uuid.NewString()
	mustApply(t, c.Nodes[gone.Index], createAccount(id))
	requireAccounts(t, c.Nodes[gone.Index], []string{id})
	st, err := leader.Status(clustertest.Context(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Nodes {
		if s.ID == goneID && (!s.Voter || s.Role != "follower") {
			t.Fatalf("rejoined node status %+v", s)
		}
	}
}

// waitServers waits until the leader's raft configuration has n servers.
func waitServers(t *testing.T, leader *clustertest.Node, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := leader.Status(clustertest.Context(t, 5*time.Second))
		if err == nil && countVoters(st) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("configuration did not reach %d voters: %+v %v", n, st, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func countVoters(st cluster.Status) int {
	n := 0
	for _, s := range st.Nodes {
		if s.Voter {
			n++
		}
	}
	return n
}

// A write forwarded to a leader that then goes silent (its HTTP answers
// nothing, as a killed machine's does) and is cut off from raft goes to
// the leader the others elect, instead of waiting out its forward; the
// request id keeps it from applying twice.
func TestForwardFollowsTheNewLeaderWhenTheOldGoesSilent(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3)
	old := c.Leader(5 * time.Second)
	var follower *clustertest.Node
	var others []int
	for _, n := range c.Nodes {
		if n != old {
			follower = n
			others = append(others, n.Index)
		}
	}
	silent := strings.TrimPrefix(old.URL(), "http://")
	c.Net.Slow(silent, time.Minute) // every write to it waits a minute
	t.Cleanup(func() { c.Net.Slow(silent, 0) })
	id := uuid.NewString()
	done := make(chan error, 1)
	go func() {
		// Less than a forward's own timeout (11 s) and LeaderWait (5 s)
		// together: only a forward given up for the new leader ends in it.
		res, err := follower.Apply(clustertest.Context(t, 10*time.Second), createAccount(id))
		if err == nil && res.GetStatus() != raftv1.Status_STATUS_OK {
			err = fmt.Errorf("result %v", res)
		}
		done <- err
	}()
	// Let the forward reach the silent leader's connection before the
	// others can elect one of their own (it then waits there a minute).
	time.Sleep(300 * time.Millisecond)
	c.Net.Partition([]int{old.Index}, others)
	if err := <-done; err != nil {
		t.Fatalf("a write forwarded to the silent leader: %v", err)
	}
	requireAccounts(t, follower, []string{id})
}
