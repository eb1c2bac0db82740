package engine_test

import (
	"testing"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// alertTypes lists the types of the pending alerts.
func (h *harness) alertTypes() []string {
	h.t.Helper()
	alerts, err := h.store.PendingAlerts(0)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, a := range alerts {
		out = append(out, a.GetType())
	}
	return out
}

// TestPauseUntilResumesOnTheEnginesClock: a ping monitor paused for ten
// minutes misses its run quietly; at the until the engine proposes
// JudgeAfresh, which resumes it with its next run expected from then; a
// minute later it is missed and alerted, once.
func TestPauseUntilResumesOnTheEnginesClock(t *testing.T) {
	h := newHarness(t)
	id := h.monitor("backup", 60, 0, 0)
	h.ping("backup", "complete")
	until := h.t0.Add(10 * time.Minute)
	h.apply(&raftv1.Command{Op: &raftv1.Command_PauseMonitor{PauseMonitor: &raftv1.PauseMonitor{
		AccountId: h.acct, MonitorUuid: id, Pause: true, UntilUnixMs: until.UnixMilli()}}})
	e, _ := h.start()
	waitFor(t, "the missed deadline", func() bool { return h.clock.waiting(h.t0.Add(time.Minute)) })
	h.clock.Advance(time.Minute)
	waitFor(t, "the held miss", func() bool { return h.engineState(id).GetState() == pingstate.Down })
	if got := h.alertTypes(); len(got) != 0 {
		t.Fatalf("alerts while paused: %v", got)
	}
	waitFor(t, "the until to be scheduled", func() bool { return h.clock.waiting(until) })
	h.clock.Advance(9 * time.Minute)
	waitFor(t, "the resume", func() bool {
		m, err := h.store.MonitorByUUID(id)
		return err == nil && !m.GetQuiet().GetPaused()
	})
	if got := h.alertTypes(); len(got) != 0 {
		t.Fatalf("alerts at the resume: %v", got)
	}
	next := until.Add(time.Minute)
	waitFor(t, "the next deadline, from the resume", func() bool { return h.clock.waiting(next) })
	h.clock.Advance(time.Minute)
	waitFor(t, "the miss after the resume", func() bool { return len(h.alertTypes()) == 1 })
	if got := h.alertTypes(); got[0] != pingstate.AlertMissed {
		t.Fatalf("alerts %v", got)
	}
	settle()
	if s := e.Stats(); s.Errors != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestWindowEndJudgesAfresh: a check failing in a maintenance window is
// held; the engine proposes JudgeAfresh at the window's end and the check,
// still failing, alerts once. Extending the window while it holds moves
// that to the new end.
func TestWindowEndJudgesAfresh(t *testing.T) {
	h := newHarness(t)
	const check = "11111111-2222-4333-8444-555555555555"
	h.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: h.acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: check, Kind: "http_check", Name: "site", Enabled: true, Schedule: "1m",
		Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}}}}}})
	window := func(end time.Time, create bool) *raftv1.Command {
		return &raftv1.Command{Op: &raftv1.Command_PutMaintenanceWindow{PutMaintenanceWindow: &raftv1.PutMaintenanceWindow{Create: create,
			Window: &raftv1.MaintenanceWindow{Id: "w1", AccountId: h.acct, Name: "patching", StartsUnixMs: h.t0.UnixMilli(), EndsUnixMs: end.UnixMilli()}}}}
	}
	h.apply(window(h.t0.Add(10*time.Minute), true))
	slot := h.t0.Add(time.Minute).UnixMilli()
	h.apply(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
		AccountId: h.acct, CheckUuid: check, Region: "control", SlotUnixMs: slot, Status: "failed", Attempts: 1, StartedUnixMs: slot, FinishedUnixMs: slot + 100}}}}})
	e, _ := h.start()
	waitFor(t, "the window's end to be scheduled", func() bool { return h.clock.waiting(h.t0.Add(10 * time.Minute)) })
	h.apply(window(h.t0.Add(20*time.Minute), false))
	waitFor(t, "the new end to be scheduled", func() bool { return h.clock.waiting(h.t0.Add(20 * time.Minute)) })
	h.clock.Advance(10 * time.Minute)
	settle()
	if got := h.alertTypes(); len(got) != 0 {
		t.Fatalf("alerts at the old end: %v", got)
	}
	h.clock.Advance(10 * time.Minute)
	waitFor(t, "the alert after the window", func() bool { return len(h.alertTypes()) == 1 })
	if got := h.alertTypes(); got[0] != "check.failed" {
		t.Fatalf("alerts %v", got)
	}
	settle()
	if s := e.Stats(); s.Errors != 0 || len(h.alertTypes()) != 1 {
		t.Fatalf("stats %+v, alerts %v", s, h.alertTypes())
	}
}

// TestRemindersOnTheEnginesClock: a ping monitor with reminders every 5
// minutes that failed gets monitor.reminder from the engine at 5 and 10
// minutes, not before, and none after its recovery.
func TestRemindersOnTheEnginesClock(t *testing.T) {
	h := newHarness(t)
	remind := int64(300)
	h.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: h.acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: "22222222-3333-4444-8555-666666666666", Kind: "ping", Name: "backup", Enabled: true, TimeoutSeconds: 60, RemindEverySeconds: &remind}}}}})
	h.ping("backup", "fail")
	h.start()
	first := h.t0.Add(5 * time.Minute)
	waitFor(t, "the first reminder to be scheduled", func() bool { return h.clock.waiting(first) })
	h.clock.Advance(5*time.Minute - time.Second)
	settle()
	if got := h.alertTypes(); len(got) != 1 {
		t.Fatalf("alerts before the reminder: %v", got)
	}
	h.clock.Advance(time.Second)
	waitFor(t, "the first reminder", func() bool { return len(h.alertTypes()) == 2 })
	waitFor(t, "the second reminder to be scheduled", func() bool { return h.clock.waiting(first.Add(5 * time.Minute)) })
	h.clock.Advance(5 * time.Minute)
	waitFor(t, "the second reminder", func() bool { return len(h.alertTypes()) == 3 })
	h.ping("backup", "complete")
	h.clock.Advance(10 * time.Minute)
	settle()
	counts := map[string]int{}
	for _, typ := range h.alertTypes() {
		counts[typ]++
	}
	if len(h.alertTypes()) != 4 || counts["monitor.failed"] != 1 || counts["monitor.reminder"] != 2 || counts["monitor.recovered"] != 1 {
		t.Fatalf("alerts %v", h.alertTypes())
	}
}

// TestDependencyRecoveryJudgesDependents: a ping monitor depending on a
// check that is down fails and is held; when the check recovers the engine
// proposes JudgeAfresh for it at once, and it alerts, still failing, once.
func TestDependencyRecoveryJudgesDependents(t *testing.T) {
	h := newHarness(t)
	const check = "11111111-2222-4333-8444-555555555555"
	h.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: h.acct, Creates: []*raftv1.MonitorSpec{
		{Uuid: check, Kind: "http_check", Name: "db", Enabled: true, Schedule: "1m", Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}},
		{Uuid: "22222222-3333-4444-8555-666666666666", Kind: "ping", Name: "app", Enabled: true, TimeoutSeconds: 60,
			DependsOn: []*raftv1.Dependency{{Kind: "http_check", Name: "db"}}},
	}}}})
	verdict := func(slot time.Time, status string) {
		ms := slot.UnixMilli()
		h.apply(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
			AccountId: h.acct, CheckUuid: check, Region: "control", SlotUnixMs: ms, Status: status, Attempts: 1, StartedUnixMs: ms, FinishedUnixMs: ms + 100}}}}})
	}
	verdict(h.t0, "failed")
	h.ping("app", "fail")
	h.start()
	settle()
	if got := h.alertTypes(); len(got) != 1 || got[0] != "check.failed" {
		t.Fatalf("alerts while the dependency is down: %v", got)
	}
	verdict(h.t0.Add(time.Minute), "success")
	waitFor(t, "the dependent's alert", func() bool { return len(h.alertTypes()) == 3 })
	counts := map[string]int{}
	for _, typ := range h.alertTypes() {
		counts[typ]++
	}
	if counts["monitor.failed"] != 1 || counts["check.recovered"] != 1 {
		t.Fatalf("alerts %v", h.alertTypes())
	}
}

// TestNoMissedAlertsForTheServicesOwnOutage: a leader marked alive at t0
// and then nothing for ten minutes (the whole cluster stopped); the next
// leader's first mark records the outage, and the ping monitor's deadline
// that fell in it restarts from the new leader's start instead of
// alerting; a minute later it is missed, once. A new leader after a short
// gap (a failover) fires an overdue deadline as usual.
func TestNoMissedAlertsForTheServicesOwnOutage(t *testing.T) {
	h := newHarness(t)
	h.monitor("backup", 60, 0, 0)
	h.ping("backup", "complete")
	first, stop := h.start() // the former leader: marks itself alive at t0
	waitFor(t, "the former leader's rebuild", func() bool { return first.Stats().Scheduled == 1 })
	stop()
	h.clock.Advance(10 * time.Minute)
	restart := h.clock.Now()
	e, _ := h.start()
	next := restart.Add(time.Minute)
	waitFor(t, "the deadline restarted from the new leader's start", func() bool { return h.clock.waiting(next) })
	if got := h.alertTypes(); len(got) != 0 {
		t.Fatalf("alerts for the outage: %v", got)
	}
	life, err := h.store.ServiceLife()
	if err != nil || len(life.GetOutages()) != 1 || life.GetOutages()[0].GetToUnixMs() != restart.UnixMilli() {
		t.Fatalf("outages %v %v", life.GetOutages(), err)
	}
	h.clock.Advance(time.Minute)
	waitFor(t, "the miss after the restart", func() bool { return len(h.alertTypes()) == 1 })
	if s := e.Stats(); s.Errors != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestAFailoverLosesNoDeadline: a new leader 20 seconds after the last
// mark (within --outage-after) fires a deadline that passed meanwhile.
func TestAFailoverLosesNoDeadline(t *testing.T) {
	h := newHarness(t)
	h.monitor("backup", 60, 0, 0)
	h.ping("backup", "complete")
	h.clock.Advance(50 * time.Second)
	_, stop := h.start() // marks alive at +50 s
	stop()
	h.clock.Advance(20 * time.Second) // the deadline (+60 s) passes with no leader
	h.start()
	waitFor(t, "the overdue miss", func() bool { return len(h.alertTypes()) == 1 })
	if life, _ := h.store.ServiceLife(); len(life.GetOutages()) != 0 {
		t.Fatalf("a failover counted as an outage: %v", life.GetOutages())
	}
}
