package agentrpc_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	"lookout/cluster/clustertest"
	"lookout/control/state"
	"lookout/internal/apikey"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestTokenOfAnAccountGetsOnlyItsAssignments: accounts A and B each have a
// check of the region and an ingest key. The stream of a token of A holds
// A's check and key only; the stream of the token of every account holds
// both. Each check names the tokens that serve its account, and each
// stream's first messages name the token and carry the region's gossip
// key. A token of B made later is added to B's check on the streams that
// hold it.
func TestTokenOfAnAccountGetsOnlyItsAssignments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acctB, keyB := e.newAccount(t)
	checkA, checkB := uuid.NewString(), uuid.NewString()
	e.putCheck(t, checkA, true, true, region)
	e.putCheckOf(t, acctB, checkB, true, true, region)
	tokenA, idA := e.newToken(t, region, e.acct)
	n := e.c.Follower()
	if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}

	first := func(s *stream) *agentv1.AssignmentsResponse {
		t.Helper()
		select {
		case m := <-s.msgs:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no first message")
			return nil
		}
	}
	sa := openStream(t, client(n, tokenA), &agentv1.AssignmentsRequest{})
	head := first(sa)
	if head.GetTokenId() != idA || !bytes.Equal(head.GetGossipKey(), gossipKey(region)) || len(head.GetGossipKey()) != 32 {
		t.Fatalf("first message: token %q key %x, want %s and the region's key", head.GetTokenId(), head.GetGossipKey(), idA)
	}
	checks, keys := map[string]*agentv1.Check{}, map[string]*agentv1.IngestKey{}
	for m := head; ; m = sa.next(t) {
		for _, c := range m.GetChecks() {
			checks[c.GetId()] = c
		}
		for _, k := range m.GetKeys() {
			keys[k.GetId()] = k
		}
		if m.GetSynced() {
			break
		}
	}
	if len(checks) != 1 || checks[checkA] == nil || len(keys) != 1 || keys[e.keyID] == nil {
		t.Fatalf("a token of A holds checks %v keys %v, want A's check %s and key %s only", ids(checks), ids(keys), checkA, e.keyID)
	}
	if got, want := checks[checkA].GetTokens(), sorted(idA, e.tokenID); !slices.Equal(got, want) {
		t.Fatalf("A's check names tokens %v, want %v", got, want)
	}

	sall := openStream(t, client(n, e.token), &agentv1.AssignmentsRequest{})
	checks, keys, _ = sall.initial(t)
	if len(checks) != 2 || len(keys) != 2 || keys[keyB] == nil {
		t.Fatalf("the token of every account holds checks %v keys %v, want both accounts'", ids(checks), ids(keys))
	}
	if got := checks[checkB].GetTokens(); !slices.Equal(got, []string{e.tokenID}) {
		t.Fatalf("B's check names tokens %v, want only the token of every account", got)
	}

	_, idB := e.newToken(t, region, acctB)
	m := sall.next(t)
	if len(m.GetChecks()) != 1 || m.GetChecks()[0].GetId() != checkB || !slices.Equal(m.GetChecks()[0].GetTokens(), sorted(idB, e.tokenID)) {
		t.Fatalf("after a token of B: %v", m)
	}
	// Nothing of B reaches the token of A.
	select {
	case m := <-sa.msgs:
		if len(m.GetChecks())+len(m.GetKeys())+len(m.GetRemovedChecks())+len(m.GetRemovedKeys()) > 0 {
			t.Fatalf("the token of A got %v", m)
		}
	case <-time.After(500 * time.Millisecond):
	}
}

// TestTokenOfAnAccountCannotForwardAnother: through a token of A, B's
// events (B's account and key) are answered UNAUTHORIZED, an event of A
// received before the token was made or more than 5 minutes ahead is
// INVALID, and B's check's executions are refused: each is counted and
// nothing of them is stored on any node, while A's event and execution
// are. The token of every account forwards B's event.
func TestTokenOfAnAccountCannotForwardAnother(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acctB, keyB := e.newAccount(t)
	checkA, checkB := uuid.NewString(), uuid.NewString()
	e.putCheck(t, checkA, true, true, region)
	e.putCheckOf(t, acctB, checkB, true, true, region)
	tokenA, _ := e.newToken(t, region, e.acct)
	c := client(e.c.Follower(), tokenA)
	ctx := clustertest.Context(t, 20*time.Second)

	now := time.Now()
	ev := func(acct, key, id, monitor string, received time.Time) *raftv1.Event {
		return &raftv1.Event{AccountId: acct, KeyId: key, EventId: id, Monitor: monitor, EventType: "ping", Status: "complete", ReceivedUnixMs: received.UnixMilli()}
	}
	res, err := c.ForwardEvents(ctx, connect.NewRequest(&agentv1.ForwardEventsRequest{Events: []*raftv1.Event{
		ev(e.acct, e.keyID, "a-1", "backup", now),
		ev(acctB, keyB, "b-1", "payroll", now),
		ev(acctB, e.keyID, "b-2", "payroll", now),
		ev(e.acct, e.keyID, "a-old", "old", now.Add(-time.Hour)),
		ev(e.acct, e.keyID, "a-ahead", "ahead", now.Add(6*time.Minute)),
	}}))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		outcome raftv1.EventOutcome
		why     string
	}{
		{raftv1.EventOutcome_EVENT_OUTCOME_STORED, ""},
		{raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED, "not an account this agent token serves"},
		{raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED, "not an account this agent token serves"},
		{raftv1.EventOutcome_EVENT_OUTCOME_INVALID, "before the agent token"},
		{raftv1.EventOutcome_EVENT_OUTCOME_INVALID, "more than 5 minutes in the future"},
	}
	for i, r := range res.Msg.GetResults() {
		if r.GetOutcome() != want[i].outcome || !strings.Contains(r.GetError(), want[i].why) {
			t.Errorf("event %d: %v %q, want %v %q", i, r.GetOutcome(), r.GetError(), want[i].outcome, want[i].why)
		}
	}
	if got := e.refused(t, "event", "account"); got != 2 {
		t.Errorf("refused events for their account: %v, want 2", got)
	}
	if got := e.refused(t, "event", "receipt_time"); got != 2 {
		t.Errorf("refused events for their receipt time: %v, want 2", got)
	}

	slot := time.Now().Truncate(time.Minute).UnixMilli()
	exec := func(acct, check string) *raftv1.Execution {
		return &raftv1.Execution{AccountId: acct, CheckUuid: check, SlotUnixMs: slot, Status: state.ExecFailed, Attempts: 1,
			StartedUnixMs: slot, FinishedUnixMs: slot + 10, Error: "hidden", ErrorKind: "connect"}
	}
	rep, err := c.ReportExecutions(ctx, connect.NewRequest(&agentv1.ReportExecutionsRequest{
		Agent: &agentv1.AgentIdentity{Id: "ag_a", Name: "edge-a"}, Executions: []*raftv1.Execution{exec(e.acct, checkA), exec(acctB, checkB)}}))
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Msg.GetResults(); len(r) != 2 || !r[0].GetStored() || r[1].GetStored() || !strings.Contains(r[1].GetError(), "does not serve") {
		t.Fatalf("executions: %v", r)
	}
	if got := e.refused(t, "execution", "account"); got != 1 {
		t.Errorf("refused executions for their account: %v, want 1", got)
	}

	for _, n := range e.c.Nodes {
		if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		st := n.State()
		if _, err := st.MonitorByName(e.acct, "ping", "backup"); err != nil {
			t.Fatalf("node %s: A's event not stored: %v", n.ID(), err)
		}
		for _, name := range []string{"old", "ahead"} {
			if _, err := st.MonitorByName(e.acct, "ping", name); !errors.Is(err, state.ErrNotFound) {
				t.Fatalf("node %s: the %s event made a monitor: %v", n.ID(), name, err)
			}
		}
		if _, err := st.MonitorByName(acctB, "ping", "payroll"); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("node %s: B's event made a monitor: %v", n.ID(), err)
		}
		if _, err := st.Execution(checkB, region, slot); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("node %s: B's execution stored: %v", n.ID(), err)
		}
		if _, err := st.Execution(checkA, region, slot); err != nil {
			t.Fatalf("node %s: A's execution: %v", n.ID(), err)
		}
	}

	// The token of every account serves B.
	res, err = client(e.c.Follower(), e.token).ForwardEvents(ctx, connect.NewRequest(&agentv1.ForwardEventsRequest{Events: []*raftv1.Event{
		ev(acctB, keyB, "b-3", "payroll", time.Now())}}))
	if err != nil || res.Msg.GetResults()[0].GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_STORED {
		t.Fatalf("B's event through the token of every account: %v %v", res, err)
	}
}

func ids[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

// TestRotatedTokenForwardsWhatWasBufferedBefore: an event an agent
// received under a token is forwarded through a token rotated from it
// after the event's receipt, but not through a new token of the same
// time; neither forwards one received before the first token was made.
func TestRotatedTokenForwardsWhatWasBufferedBefore(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := time.Now().Add(-time.Second)
	_, oldID := e.newToken(t, region, e.acct)
	time.Sleep(20 * time.Millisecond)
	buffered := time.Now()
	time.Sleep(20 * time.Millisecond)
	rotated, hash, err := apikey.New(apikey.Agent)
	if err != nil {
		t.Fatal(err)
	}
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: &raftv1.CreateAgentToken{
		Id: uuid.NewString(), Region: region, Name: "agents of " + region, Hash: hash, Accounts: []string{e.acct}, Replaces: oldID}}})
	fresh, _ := e.newToken(t, region, e.acct)
	ctx := clustertest.Context(t, 20*time.Second)

	forward := func(token, id string, received time.Time) *raftv1.EventResult {
		t.Helper()
		res, err := client(e.c.Follower(), token).ForwardEvents(ctx, connect.NewRequest(&agentv1.ForwardEventsRequest{Events: []*raftv1.Event{{
			AccountId: e.acct, KeyId: e.keyID, EventId: id, Monitor: "backup", EventType: "ping", Status: "complete", ReceivedUnixMs: received.UnixMilli()}}}))
		if err != nil {
			t.Fatal(err)
		}
		return res.Msg.GetResults()[0]
	}
	if r := forward(fresh, "buffered", buffered); r.GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_INVALID || !strings.Contains(r.GetError(), "before the agent token") {
		t.Fatalf("a new token forwarded an event received before it was made: %v", r)
	}
	if r := forward(rotated, "buffered", buffered); r.GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_STORED {
		t.Fatalf("the rotated token did not forward an event received under the old one: %v", r)
	}
	if r := forward(rotated, "older", before); r.GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_INVALID {
		t.Fatalf("the rotated token forwarded an event received before the first token: %v", r)
	}
}
