package alert

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// TestPayloadSaysWhatHappened: a missed run reaches the webhook with its
// summary, when it was expected, the last ping and the interval; the
// recovery says how long the monitor was down; a check's failure says
// what it answered.
func TestPayloadSaysWhatHappened(t *testing.T) {
	e := newEnv(t)
	e.clock.Store(time.Date(2026, 3, 14, 2, 0, 0, 0, time.UTC).UnixMilli())
	r := newReceiver(t)
	e.defaultChannel("ch-1", "webhook", r.config())
	const id = "5b0c7a53-0d7e-4b43-9c55-0d6f8e1f2a10"
	e.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: id, Kind: "ping", Name: "nightly-backup", Enabled: true, TimeoutSeconds: 3600,
		ExpectedIntervalSeconds: proto.Int64(1800), GraceSeconds: proto.Int64(300),
	}}}}})
	ping := func(status string) {
		e.apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: []*raftv1.Event{{
			AccountId: acct, Monitor: "nightly-backup", EventType: "ping", Status: status, ReceivedUnixMs: e.now().UnixMilli(),
		}}}}})
	}
	ping("complete") // 02:00; the next run is expected at 02:30, missed at 02:35
	last := e.now()
	e.advance(35 * time.Minute)
	e.apply(&raftv1.Command{Op: &raftv1.Command_FireDeadline{FireDeadline: &raftv1.FireDeadline{
		AccountId: acct, MonitorUuid: id, Kind: pingstate.DeadlineMissed, DueUnixMs: e.now().UnixMilli(),
	}}})
	e.start(DispatcherOptions{})
	e.waitFor("the missed alert", func() bool { return r.count() == 1 })
	p := r.last()
	if p.Summary != "nightly-backup missed its run expected at 02:30 UTC" || p.Monitor.ExpectedIntervalSeconds != 1800 {
		t.Errorf("missed: %q, interval %d", p.Summary, p.Monitor.ExpectedIntervalSeconds)
	}
	if p.ExpectedAt == nil || !p.ExpectedAt.Equal(last.Add(30*time.Minute)) || p.LastPingAt == nil || !p.LastPingAt.Equal(last) {
		t.Errorf("missed: expected at %v, last ping %v", p.ExpectedAt, p.LastPingAt)
	}

	e.advance(12 * time.Minute)
	ping("complete")
	e.waitFor("the recovery", func() bool { return r.count() == 2 })
	if p := r.last(); p.Type != "monitor.recovered" || p.Summary != "nightly-backup recovered after 12 min down" || !p.LastPingAt.Equal(e.now()) {
		t.Errorf("recovery: %s %q, last ping %v", p.Type, p.Summary, p.LastPingAt)
	}

	// A check: what it answered, against what it expects.
	const check = "6c1d8b64-1e8f-4c54-8d66-1e7f9f2f3b21"
	e.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: check, Kind: state.KindHTTPCheck, Name: "home-page", DisplayName: "home page", Enabled: true, Schedule: "1m",
		Config: &raftv1.CheckConfig{Url: "https://example.com/", Method: "GET", Timeout: 10, ExpectedStatus: proto.Int64(200)},
	}}}}})
	slot := e.now().Truncate(time.Minute).UnixMilli()
	e.apply(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{RetentionCount: 10, Executions: []*raftv1.Execution{{
		AccountId: acct, CheckUuid: check, Region: state.RegionControl, SlotUnixMs: slot, Status: state.ExecFailed, Attempts: 1,
		StartedUnixMs: slot, FinishedUnixMs: slot + 80, Error: "the status is 503, expected 200", ErrorKind: "unexpected_status",
		Http: &raftv1.ExecutionHTTP{StatusCode: 503},
	}}}}})
	e.waitFor("the check's alert", func() bool { return r.count() == 3 })
	if p := r.last(); p.Summary != "home page failed: answered 503, expected 200" || p.ExpectedAt != nil || p.LastPingAt != nil {
		t.Errorf("check: %q, expected at %v, last ping %v", p.Summary, p.ExpectedAt, p.LastPingAt)
	}
}
