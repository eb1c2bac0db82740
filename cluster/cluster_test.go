package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// createAccount is a command that makes an account with a unique e-mail.
func createAccount(id string) *raftv1.Command {
	key := func(kind raftv1.KeyType) *raftv1.Key {
		kid := uuid.NewString()
		return &raftv1.Key{Id: kid, AccountId: id, Type: kind, Name: "k", Hash: []byte("hash-" + kid)}
	}
	return &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId:     id,
		Email:         id + "@example.com",
		Plan:          &raftv1.Plan{Name: "default", ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20},
		IngestKey:     key(raftv1.KeyType_KEY_TYPE_INGEST),
		ManagementKey: key(raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}}
}

// mustApply applies cmd through n and requires an OK result.
func mustApply(t *testing.T, n *clustertest.Node, cmd *raftv1.Command) {
	t.Helper()
	res, err := n.Apply(clustertest.Context(t, 15*time.Second), cmd)
	if err != nil {
		t.Fatalf("apply on %s: %v", n.ID(), err)
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("apply on %s: %v %s", n.ID(), res.GetStatus(), res.GetMessage())
	}
}

// requireAccounts checks, with a consistent read on n, that every id exists.
func requireAccounts(t *testing.T, n *clustertest.Node, ids []string) {
	t.Helper()
	if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatalf("consistent read on %s: %v", n.ID(), err)
	}
	for _, id := range ids {
		if _, err := n.State().Account(id); err != nil {
			t.Fatalf("%s: account %s: %v", n.ID(), id, err)
		}
	}
}

func TestWriteOnFollowerIsForwardedAndReadableEverywhere(t *testing.T) {
	c := clustertest.NewCluster(t, 3)
	f := c.Follower()
	id := uuid.NewString()
	mustApply(t, f, createAccount(id))
	for _, n := range c.Nodes {
		requireAccounts(t, n, []string{id})
	}
	// The same command again (a different request id) is a conflict on
	// every node alike: the state machine answers, not the proposer.
	res, err := c.Nodes[0].Apply(clustertest.Context(t, 10*time.Second), createAccount(id))
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_CONFLICT {
		t.Fatalf("second create: %v %v", res, err)
	}
}

func TestRetriedRequestIsAppliedOnce(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3)
	id := uuid.NewString()
	cmd := createAccount(id)
	cmd.RequestId = "retry-" + id
	mustApply(t, c.Follower(), cmd)
	// A retry of the very same request (same id) through another node gets
	// the first result, not a conflict, and changes nothing.
	before := c.Leader(5 * time.Second).State().AppliedIndex()
	res, err := c.Leader(5*time.Second).Apply(clustertest.Context(t, 10*time.Second), cmd)
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("retry: %v %v", res, err)
	}
	if got := c.Leader(5 * time.Second).State().AppliedIndex(); got != before+1 {
		t.Fatalf("applied index %d after retry, want %d (one entry, no change)", got, before+1)
	}
}

func TestKillLeaderKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3)
	var ids []string
	for i := 0; i < 20; i++ {
		id := uuid.NewString()
		mustApply(t, c.Nodes[i%3], createAccount(id))
		ids = append(ids, id)
	}
	old := c.Leader(5 * time.Second)
	oldID := old.ID()
	c.Kill(old.Index)
	leader, err := c.WaitLeader(5*time.Second, c.Running()...)
	if err != nil {
		t.Fatalf("after killing %s: %v", oldID, err)
	}
	for _, n := range c.Running() {
		requireAccounts(t, n, ids)
	}
	id := uuid.NewString()
	mustApply(t, leader, createAccount(id))
	// The old leader comes back from its data and catches up.
	c.Restart(old.Index)
	c.WaitConverged(20 * time.Second)
	requireAccounts(t, c.Nodes[old.Index], append(ids, id))
}

func TestLeaderTasksRunOnlyOnTheLeader(t *testing.T) {
	t.Parallel()
	type run struct {
		node    int
		stopped chan struct{}
	}
	started := make(chan run, 16)
	c := clustertest.NewCluster(t, 3, clustertest.Options{Tune: func(i int, o *cluster.Options) {
		o.LeaderTasks = []func(context.Context, *cluster.Node){func(ctx context.Context, _ *cluster.Node) {
			r := run{node: i, stopped: make(chan struct{})}
			started <- r
			<-ctx.Done()
			close(r.stopped)
		}}
	}})
	leader := c.Leader(5 * time.Second)
	first := <-started
	if first.node != leader.Index {
		t.Fatalf("task started on node %d, leader is %d", first.node, leader.Index)
	}
	c.Kill(leader.Index)
	select {
	case <-first.stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not stop with leadership")
	}
	next := c.Leader(10 * time.Second)
	select {
	case r := <-started:
		if r.node != next.Index {
			t.Fatalf("task restarted on node %d, leader is %d", r.node, next.Index)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the new leader did not start the task")
	}
	select {
	case r := <-started:
		t.Fatalf("a second task runs on node %d", r.node)
	default:
	}
}

// TestLateNodeJoinsAsVoterWithoutBootstrapping: a fourth node started with
// the same --bootstrap-expect after the cluster exists must not bootstrap a
// cluster of its own. Its id sorts first, so it is the one that would; its
// raft port is cut off at first, so the leader cannot reach it and only the
// check that a peer already has a configuration holds it back. Once raft
// gets through, the leader's configuration (which added it as a voter)
// reaches it and it has the cluster's data.
func TestLateNodeJoinsAsVoterWithoutBootstrapping(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3)
	id := uuid.NewString()
	mustApply(t, c.Follower(), createAccount(id))
	late := c.AddCutOff("node-a")
	leader := c.Leader(10 * time.Second)
	waitServers(t, leader, 4, 30*time.Second)
	time.Sleep(2500 * time.Millisecond) // two rounds of the bootstrap loop
	if idx := late.RaftStats()["last_log_index"]; idx != "0" {
		t.Fatalf("the late node wrote its own raft log (last index %s): it bootstrapped", idx)
	}
	c.Net.Unblock(late.RaftAddr())
	requireAccounts(t, late, []string{id})
	if got := late.Leader(); got != leader.ID() {
		t.Fatalf("the late node follows %q, want the cluster's leader %q", got, leader.ID())
	}
}
