package forward_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"lookout/agent/agenttest"
	"lookout/agent/forward"
	"lookout/agent/link"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

type members []string

func (m members) MemberIDs() []string { return m }

// countingBuffer records every acknowledgement, to see that none comes
// before the control plane's answer.
type countingBuffer struct {
	*agenttest.Buffer
	cp       *agenttest.ControlPlane
	ackedEvs []uint64
	storedAt []int // events the control plane had stored at each ack
}

func (b *countingBuffer) AckEvents(upTo uint64) error {
	b.ackedEvs = append(b.ackedEvs, upTo)
	b.storedAt = append(b.storedAt, len(b.cp.Events()))
	return b.Buffer.AckEvents(upTo)
}

func event(i int) *raftv1.Event {
	return &raftv1.Event{AccountId: "acc1", Monitor: "backup", EventType: "ping", Status: "complete",
		EventId: fmt.Sprintf("ev-%04d", i), KeyId: "k1", ReceivedUnixMs: int64(1_700_000_000_000 + i)}
}

func newLink(t *testing.T, urls ...string) *link.Client {
	t.Helper()
	c, err := link.New(link.Options{URLs: urls, Token: "at_ok", Agent: &agentv1.AgentIdentity{Id: "ag_1", Name: "edge-1"}, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

func run(t *testing.T, o forward.Options) *forward.Forwarder {
	t.Helper()
	if o.Backoff.Min == 0 {
		o.Backoff = link.Backoff{Min: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	}
	if o.Poll == 0 {
		o.Poll = 10 * time.Millisecond
	}
	f := forward.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestForwardInOrderAckAfterAnswer: buffered events reach the control
// plane in order, in batches, each acknowledged only after the answer;
// failed calls are retried and nothing is lost or stored twice.
func TestForwardInOrderAckAfterAnswer(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	buf := &countingBuffer{Buffer: agenttest.NewBuffer(), cp: cp}
	const n = 1234
	for i := range n {
		buf.AppendEvent(event(i))
	}
	cp.FailCalls(3) // the first three calls fail
	f := run(t, forward.Options{Buffer: buf, Control: newLink(t, cp.URL()), Batch: 100, Lanes: 1})
	eventually(t, "the buffer drained", func() bool { return buf.Stats().Events == 0 })
	got := cp.Events()
	if len(got) != n {
		t.Fatalf("%d events stored, want %d", len(got), n)
	}
	for i, ev := range got {
		if ev.GetEventId() != fmt.Sprintf("ev-%04d", i) {
			t.Fatalf("event %d is %s: out of order", i, ev.GetEventId())
		}
	}
	for i, upTo := range buf.ackedEvs {
		if stored := buf.storedAt[i]; uint64(stored) < upTo {
			t.Fatalf("ack %d up to %d when the control plane had stored %d", i, upTo, stored)
		}
	}
	if len(buf.ackedEvs) != 13 {
		t.Fatalf("%d batches, want 13 of at most 100", len(buf.ackedEvs))
	}
	if st := f.Stats(); st.ForwardedEvents != n || st.Failures < 1 {
		t.Fatalf("stats %+v", st)
	}
	if q, ok := f.Quota("acc1"); !ok || q.GetUsed() != n {
		t.Fatalf("last quota %v %v", q, ok)
	}
}

// TestLanesKeepEachMonitorsOrder: a backlog of many monitors goes over
// several calls at once; each monitor's events still reach the control
// plane in the order they were buffered, a window is acknowledged only
// once every call of it was answered, and calls that fail half way
// through a window lose nothing and store nothing twice.
func TestLanesKeepEachMonitorsOrder(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	buf := &countingBuffer{Buffer: agenttest.NewBuffer(), cp: cp}
	const n, monitors = 2345, 20
	for i := range n {
		ev := event(i)
		ev.Monitor = fmt.Sprintf("job-%d", i%monitors)
		buf.AppendEvent(ev)
	}
	cp.FailCalls(2) // two calls of the first window fail, the others store
	f := run(t, forward.Options{Buffer: buf, Control: newLink(t, cp.URL()), Batch: 100, Lanes: 4})
	eventually(t, "the buffer drained", func() bool { return buf.Stats().Events == 0 })
	got := cp.Events()
	if len(got) != n {
		t.Fatalf("%d events stored, want %d", len(got), n)
	}
	last := map[string]int{}
	for _, ev := range got {
		var i int
		fmt.Sscanf(ev.GetEventId(), "ev-%d", &i)
		if prev, ok := last[ev.GetMonitor()]; ok && i <= prev {
			t.Fatalf("monitor %s: event %d stored after %d", ev.GetMonitor(), i, prev)
		}
		last[ev.GetMonitor()] = i
	}
	for i, upTo := range buf.ackedEvs {
		if stored := buf.storedAt[i]; uint64(stored) < upTo {
			t.Fatalf("ack %d up to %d when the control plane had stored %d", i, upTo, stored)
		}
	}
	windows := (n + 399) / 400
	if len(buf.ackedEvs) != windows {
		t.Fatalf("%d acknowledgements, want %d windows of 4 x 100", len(buf.ackedEvs), windows)
	}
	if calls := cp.Calls("ForwardEvents"); calls < 2*windows {
		t.Fatalf("%d calls for %d windows: the windows were not split into lanes", calls, windows)
	}
	if st := f.Stats(); st.ForwardedEvents != n || st.Failures < 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestCutOffKeepsBuffer: while every control node is down nothing is
// acknowledged; when one comes back (another URL) everything goes.
func TestCutOffKeepsBuffer(t *testing.T) {
	cp1 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp2 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp1.Close()
	cp2.FailCalls(1 << 30)
	buf := agenttest.NewBuffer()
	for i := range 10 {
		buf.AppendEvent(event(i))
	}
	buf.AppendResult(&raftv1.Execution{CheckUuid: "c1", AccountId: "acc1", SlotUnixMs: 1, Status: "success"})
	cp2.PutCheck(&agentv1.Check{Id: "c1", AccountId: "acc1", Kind: "http_check", Schedule: "1m"})
	run(t, forward.Options{Buffer: buf, Control: newLink(t, cp1.URL(), cp2.URL())})
	time.Sleep(300 * time.Millisecond)
	if st := buf.Stats(); st.Events != 10 || st.Results != 1 {
		t.Fatalf("while cut off the buffer holds %+v", st)
	}
	cp2.FailCalls(0)
	eventually(t, "the buffer drained", func() bool { st := buf.Stats(); return st.Events == 0 && st.Results == 0 })
	if len(cp2.Events()) != 10 || len(cp2.Executions()) != 1 {
		t.Fatalf("stored %d events, %d executions", len(cp2.Events()), len(cp2.Executions()))
	}
}

// TestRefusedAreFinal: an event or a result the control plane refuses is
// counted and dropped, not sent again.
func TestRefusedAreFinal(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.Refuse("ev-0001", raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT)
	buf := agenttest.NewBuffer()
	for i := range 3 {
		buf.AppendEvent(event(i))
	}
	buf.AppendResult(&raftv1.Execution{CheckUuid: "gone", AccountId: "acc1", SlotUnixMs: 1, Status: "failed"})
	met := &metrics{}
	f := run(t, forward.Options{Buffer: buf, Control: newLink(t, cp.URL()), Metrics: met})
	eventually(t, "the buffer drained", func() bool { st := buf.Stats(); return st.Events == 0 && st.Results == 0 })
	time.Sleep(100 * time.Millisecond)
	if st := f.Stats(); st.ForwardedEvents != 2 || st.RefusedEvents != 1 || st.RefusedResults != 1 || st.ForwardedResults != 0 {
		t.Fatalf("stats %+v", st)
	}
	if cp.Calls("ForwardEvents") != 1 || cp.Calls("ReportExecutions") != 1 {
		t.Fatalf("refused items were sent again: %d, %d calls", cp.Calls("ForwardEvents"), cp.Calls("ReportExecutions"))
	}
	if met.refused["event/monitor_limit"] != 1 || met.refused["result/refused"] != 1 || met.forwarded["event"] != 2 {
		t.Fatalf("metrics %+v", met)
	}
}

// TestRevokedKeepsBuffer: a refused token leaves the buffer whole and
// the forwarder retries slowly; a valid token drains it.
func TestRevokedKeepsBuffer(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.Revoke()
	buf := agenttest.NewBuffer()
	for i := range 5 {
		buf.AppendEvent(event(i))
	}
	l := newLink(t, cp.URL())
	start := time.Now()
	run(t, forward.Options{Buffer: buf, Control: l, Revoked: 200 * time.Millisecond, HeartbeatEvery: time.Hour})
	eventually(t, "the refusal", func() bool { return l.State() == link.Unauthenticated })
	// It tries again, each time after the Revoked wait: the third call
	// comes two waits after the first at the earliest (a slow machine only
	// makes it later).
	eventually(t, "two more tries", func() bool { return cp.Calls("ForwardEvents") >= 3 })
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Fatalf("three calls in %s of a refusal: the forwarder did not wait %s between them", took, 200*time.Millisecond)
	}
	if st := buf.Stats(); st.Events != 5 {
		t.Fatalf("a revoked agent's buffer holds %+v", st)
	}
	cp.SetToken("at_ok")
	eventually(t, "the buffer drained", func() bool { return buf.Stats().Events == 0 })
	if len(cp.Events()) != 5 {
		t.Fatalf("%d events stored", len(cp.Events()))
	}
}

// TestHeartbeat: heartbeats carry the buffer and the region's members.
func TestHeartbeat(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.FailCalls(1 << 30) // nothing is forwarded, so the buffer stays
	buf := agenttest.NewBuffer()
	buf.AppendEvent(event(7))
	f := forward.New(forward.Options{Buffer: buf, Control: newLink(t, cp.URL()), Members: members{"ag_1", "ag_2"}})
	cp.FailCalls(0)
	if err := f.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
	hb := cp.Heartbeats()[0]
	if hb.GetBufferedEvents() != 1 || hb.GetOldestBufferedUnixMs() != event(7).GetReceivedUnixMs() || len(hb.GetMembers()) != 2 || hb.GetAgent().GetName() != "edge-1" {
		t.Fatalf("heartbeat %v", hb)
	}
}

type metrics struct {
	forwarded map[string]int
	refused   map[string]int
}

func (m *metrics) Forwarded(kind string, n int) {
	if m.forwarded == nil {
		m.forwarded = map[string]int{}
	}
	m.forwarded[kind] += n
}

func (m *metrics) Refused(kind, reason string, n int) {
	if m.refused == nil {
		m.refused = map[string]int{}
	}
	m.refused[kind+"/"+reason] += n
}
