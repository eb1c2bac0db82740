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
