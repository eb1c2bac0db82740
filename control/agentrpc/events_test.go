package agentrpc_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	"lookout/cluster/clustertest"
	"lookout/control/state"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestForwardEventsStoredOnce forwards a buffer of 300 events to a
// follower twice: the first time each is stored, the second a duplicate;
// every node holds each event once, with the token's region and the
// agent's receipt time, in the order sent.
func TestForwardEventsStoredOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.c.Follower()
	c := client(f, e.token)
	received := time.Now().UnixMilli() // buffered after the token was made
	var evs []*raftv1.Event
	for i := range 300 {
		evs = append(evs, &raftv1.Event{
			AccountId: e.acct, KeyId: e.keyID, EventId: fmt.Sprintf("ev-%03d", i), Monitor: "backup",
			EventType: "ping", Status: "complete", ReceivedUnixMs: received + int64(i), Region: "forged",
		})
	}
	for round, want := range []raftv1.EventOutcome{raftv1.EventOutcome_EVENT_OUTCOME_STORED, raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE} {
		res, err := c.ForwardEvents(clustertest.Context(t, 20*time.Second), connect.NewRequest(&agentv1.ForwardEventsRequest{Events: evs}))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(res.Msg.GetResults()) != len(evs) {
			t.Fatalf("round %d: %d results for %d events", round, len(res.Msg.GetResults()), len(evs))
		}
		for i, r := range res.Msg.GetResults() {
			if r.GetOutcome() != want {
				t.Fatalf("round %d: event %d: %v, want %v", round, i, r.GetOutcome(), want)
			}
		}
	}
	for _, n := range e.c.Nodes {
		if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		m, err := n.State().MonitorByName(e.acct, "ping", "backup")
		if err != nil {
			t.Fatalf("node %s: %v", n.ID(), err)
		}
		stored, err := n.State().Events(e.acct, m.GetUuid(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != len(evs) {
			t.Fatalf("node %s holds %d events, want %d", n.ID(), len(stored), len(evs))
		}
		// Newest first.
		for i, s := range stored {
			ev := s.GetEvent()
			j := len(evs) - 1 - i
			if ev.GetEventId() != evs[j].GetEventId() || ev.GetRegion() != region || ev.GetReceivedUnixMs() != received+int64(j) {
				t.Fatalf("node %s: event %d is %s region %q received %d; want %s, %s, %d", n.ID(), i,
					ev.GetEventId(), ev.GetRegion(), ev.GetReceivedUnixMs(), evs[j].GetEventId(), region, received+int64(j))
			}
		}
	}
}

// TestForwardEventsBounds: a batch over its bounds, or with an event
// without its ids, is refused whole; an event that breaks the Ingest
// API's rules (or was received before the agent's token was made) is
// answered INVALID and the others are stored.
func TestForwardEventsBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := client(e.c.Leader(10*time.Second), e.token)
	now := time.Now().UnixMilli()
	good := func(id string) *raftv1.Event {
		return &raftv1.Event{AccountId: e.acct, KeyId: e.keyID, EventId: id, Monitor: "job", EventType: "ping", Status: "run", ReceivedUnixMs: now}
	}
	call := func(evs ...*raftv1.Event) (*agentv1.ForwardEventsResponse, error) {
		res, err := c.ForwardEvents(clustertest.Context(t, 20*time.Second), connect.NewRequest(&agentv1.ForwardEventsRequest{Events: evs}))
		if err != nil {
			return nil, err
		}
		return res.Msg, nil
	}
	var many []*raftv1.Event
	for i := range 1001 {
		many = append(many, good(fmt.Sprint(i)))
	}
	big := good("big")
	big.Message = strings.Repeat("x", 5<<20)
	noID, noKey, noAcct := good(""), good("k"), good("a")
	noKey.KeyId, noAcct.AccountId = "", ""
	for name, evs := range map[string][]*raftv1.Event{"1001 events": many, "5 MiB": {big}, "no event_id": {good("x"), noID}, "no key_id": {noKey}, "no account_id": {noAcct}} {
		if _, err := call(evs...); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}

	badStatus, old, future := good("bad-status"), good("old"), good("future")
	badStatus.Status = "done"
	old.ReceivedUnixMs = time.Now().Add(-25 * time.Hour).UnixMilli()
	future.ReceivedUnixMs = time.Now().Add(time.Hour).UnixMilli()
	otherKey := good("other-key")
	otherKey.KeyId = uuid.NewString()
	res, err := call(good("ok-1"), badStatus, old, future, otherKey, good("ok-2"))
	if err != nil {
		t.Fatal(err)
	}
	want := []raftv1.EventOutcome{
		raftv1.EventOutcome_EVENT_OUTCOME_STORED, raftv1.EventOutcome_EVENT_OUTCOME_INVALID, raftv1.EventOutcome_EVENT_OUTCOME_INVALID,
		raftv1.EventOutcome_EVENT_OUTCOME_INVALID, raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED, raftv1.EventOutcome_EVENT_OUTCOME_STORED,
	}
	for i, r := range res.GetResults() {
		if r.GetOutcome() != want[i] {
			t.Errorf("event %d: %v (%s), want %v", i, r.GetOutcome(), r.GetError(), want[i])
		}
	}
	if e := res.GetResults()[2].GetError(); !strings.Contains(e, "before the agent token") {
		t.Errorf("old event's error %q", e)
	}
}

// TestReportExecutions: verdicts of the region's check are stored once,
// stamped with the token's region and the agent's name and id; a check of
// another region, a disabled one, a gone one and a status that is not
// final are refused one by one.
func TestReportExecutions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine, other, off := uuid.NewString(), uuid.NewString(), uuid.NewString()
	e.putCheck(t, mine, true, true, region)
	e.putCheck(t, other, true, true, "us-1")
	e.putCheck(t, off, false, true, region)
	f := e.c.Follower()
	c := client(f, e.token)
	slot := time.Now().Truncate(time.Minute).UnixMilli()
	ex := func(check, status string) *raftv1.Execution {
		return &raftv1.Execution{AccountId: e.acct, CheckUuid: check, Region: "forged", SlotUnixMs: slot, Status: status,
			Attempts: 1, StartedUnixMs: slot, FinishedUnixMs: slot + 50, DurationMs: 50}
	}
	req := &agentv1.ReportExecutionsRequest{Agent: &agentv1.AgentIdentity{Id: "a1", Name: "host-1"}, Executions: []*raftv1.Execution{
		ex(mine, state.ExecSuccess), ex(other, state.ExecSuccess), ex(off, state.ExecSuccess), ex(uuid.NewString(), state.ExecSuccess), ex(mine, state.ExecRunning),
		ex(mine, state.ExecFailed),
	}}
	req.Executions[5].SlotUnixMs = time.Now().Add(time.Hour).UnixMilli()
	for round := range 2 {
		res, err := c.ReportExecutions(clustertest.Context(t, 10*time.Second), connect.NewRequest(req))
		if err != nil {
			t.Fatal(err)
		}
		r := res.Msg.GetResults()
		if len(r) != 6 || !r[0].GetStored() || r[0].GetError() != "" {
			t.Fatalf("round %d: results %v", round, r)
		}
		for i, want := range []string{"", "does not run in region " + region, "disabled", "not found", "not final", "in the future"} {
			if i > 0 && (r[i].GetStored() || !strings.Contains(r[i].GetError(), want)) {
				t.Fatalf("round %d: result %d: %v, want refused: %s", round, i, r[i], want)
			}
		}
	}
	for _, n := range e.c.Nodes {
		if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := n.State().Execution(mine, "forged", slot); err == nil {
			t.Fatal("stored under the region the agent said")
		}
		got, err := n.State().Execution(mine, region, slot)
		if err != nil || got.GetAgent() != "host-1" || got.GetAgentId() != "a1" || got.GetStatus() != state.ExecSuccess {
			t.Fatalf("node %s: %v %v", n.ID(), got, err)
		}
		cs, _ := n.State().CheckStatus(mine)
		if cs.GetExecutions() != 1 {
			t.Fatalf("node %s holds %d executions, want 1", n.ID(), cs.GetExecutions())
		}
	}
}

// TestConfirmRegionsAcrossAgents: a check of eu-1 and us-1 with
// confirm_regions 2; the agents of eu-1 report a failure (through a
// follower), nothing is raised; those of us-1 report one of the same slot
// (through the other follower), and every node holds exactly one
// check.failed naming both regions.
func TestConfirmRegionsAcrossAgents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	us, _ := e.newToken(t, "us-1")
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: e.acct, ChannelId: uuid.NewString(), Type: "webhook", Name: "hook",
		ConfigJson: []byte(`{"url":"http://127.0.0.1:1/hook","secret":"s"}`), IsDefault: true}}})
	check := uuid.NewString()
	two := int64(2)
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: e.acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: check, Kind: "http_check", Name: "shop", Enabled: true, Schedule: "1m", Regions: []string{region, "us-1"}, ConfirmRegions: &two,
		Config: &raftv1.CheckConfig{Url: "https://shop.example.com/", Method: "GET", Timeout: 10}}}}}})
	var followers []*clustertest.Node
	leader := e.c.Leader(10 * time.Second)
	for _, n := range e.c.Nodes {
		if n != leader {
			followers = append(followers, n)
		}
	}
	slot := time.Now().Truncate(time.Minute).UnixMilli()
	report := func(n *clustertest.Node, token string) {
		t.Helper()
		res, err := client(n, token).ReportExecutions(clustertest.Context(t, 10*time.Second), connect.NewRequest(&agentv1.ReportExecutionsRequest{
			Agent: &agentv1.AgentIdentity{Name: "probe"}, Executions: []*raftv1.Execution{{AccountId: e.acct, CheckUuid: check, SlotUnixMs: slot,
				Status: state.ExecFailed, Attempts: 4, StartedUnixMs: slot, FinishedUnixMs: slot + 9000, Error: "connection refused", ErrorKind: "connect"}}}))
		if err != nil || !res.Msg.GetResults()[0].GetStored() {
			t.Fatalf("report: %v %v", res, err)
		}
	}
	checkFailed := func(n *clustertest.Node) [][]string {
		t.Helper()
		if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		pending, err := n.State().PendingAlerts(0)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, a := range pending {
			if a.GetType() == state.AlertCheckFailed && a.GetMonitorUuid() == check {
				out = append(out, a.GetRegions())
			}
		}
		return out
	}
	report(followers[0], e.token)
	if got := checkFailed(leader); len(got) != 0 {
		t.Fatalf("one region of two saw it fail: %v", got)
	}
	report(followers[1], us)
	report(followers[0], e.token) // a repeat
	for _, n := range e.c.Nodes {
		got := checkFailed(n)
		if len(got) != 1 || strings.Join(got[0], ",") != region+",us-1" {
			t.Fatalf("node %s: check.failed alerts %v, want one naming %s and us-1", n.ID(), got, region)
		}
	}
}
