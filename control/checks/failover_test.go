package checks

import (
	"fmt"
	"testing"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/schedule"
)

// idAt returns a check id whose offset in schedule sc is off.
func idAt(t *testing.T, sc schedule.Schedule, off time.Duration, not ...string) string {
	t.Helper()
	for i := range 100000 {
		id := fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
		if sc.Offset(id) == off && (len(not) == 0 || id != not[0]) {
			return id
		}
	}
	t.Fatalf("no id at offset %v", off)
	return ""
}

func TestNewLeaderRunsTheJustMissedCronSlot(t *testing.T) {
	f := newFixture(t)
	const id = "c0000000-0000-4000-8000-0000000000d1"
	f.put(id, "*/2 * * * *", true, true)
	f.clock.Advance(10 * time.Second) // 12:00:10: the 12:00 slot passed with no leader running it
	f.start(Options{})
	f.waitFor("the missed cron slot's verdict", 0, func() bool { return len(f.verdicts(id)) == 1 })
	if got := f.verdicts(id)[0].GetSlotUnixMs(); got != base.UnixMilli() {
		t.Fatalf("ran slot %v, want %v", time.UnixMilli(got).UTC(), base)
	}
	// Another leader a moment later finds the verdict and does not repeat it.
	f.stop()
	f.clock.Advance(time.Second)
	f.start(Options{})
	f.waitFor("the second term to schedule", 0, func() bool { return f.sched.Stats().Scheduled == 1 })
	time.Sleep(100 * time.Millisecond)
	if n := len(f.prober.attempts(url(id))); n != 1 {
		t.Fatalf("%d attempts of one slot", n)
	}
}

// TestNewLeaderClosesStrandedExecutions: executions a dead leader left
// running or retrying are closed as interrupted by the next leader, without
// an alert and without moving the check's verdict, unless their slot is
// the one the new leader reruns (then the rerun decides it).
func TestNewLeaderClosesStrandedExecutions(t *testing.T) {
	f := newFixture(t)
	sc, _ := schedule.Parse("1m")
	x := idAt(t, sc, 7*time.Second)      // up; left running 5 min ago
	y := idAt(t, sc, (7+38)*time.Second) // left retrying at its latest slot, 2 s ago
	z := idAt(t, sc, 20*time.Second)     // disabled since; left running
	f.apply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: "a", ChannelId: "hook", Type: "webhook", Name: "hook", IsDefault: true,
		ConfigJson: []byte(`{"url":"http://127.0.0.1:9/","secret":"whsec_dGVzdC1zaWduaW5nLWtleQ=="}`),
	}}})
	f.put(x, "1m", true, true)
	f.put(y, "1m", true, true)
	f.put(z, "1m", false, true)
	f.clock.Advance(10*time.Minute + 7*time.Second + 40*time.Second) // x's latest slot is 40 s old: not rerun
	now := f.clock.Now()
	xSlot, ySlot, zSlot := now.Add(-40*time.Second-5*time.Minute), now.Add(-2*time.Second), now.Add(-3*time.Minute)
	exec := func(id string, slot time.Time, status string, attempts int64) *raftv1.Execution {
		e := &raftv1.Execution{AccountId: "a", CheckUuid: id, Region: state.RegionControl, SlotUnixMs: slot.UnixMilli(),
			Status: status, Attempts: attempts, StartedUnixMs: slot.UnixMilli()}
		if status != state.ExecRunning {
			e.FinishedUnixMs = slot.UnixMilli() + 100
		}
		if status == state.ExecRetrying {
			e.Error, e.ErrorKind = "status 500", "unexpected_status"
		}
		return e
	}
	f.apply(&raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{
		exec(x, xSlot.Add(-time.Minute), state.ExecSuccess, 1), exec(x, xSlot, state.ExecRunning, 1),
		exec(y, ySlot, state.ExecRetrying, 2), exec(z, zSlot, state.ExecRunning, 1),
	}}}})

	f.start(Options{})
	get := func(id string, slot time.Time) *raftv1.Execution {
		t.Helper()
		e, err := f.store.Execution(id, state.RegionControl, slot.UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	f.waitFor("the stranded executions to be closed or rerun", 0, func() bool {
		return state.FinalStatus(get(x, xSlot).GetStatus()) && state.FinalStatus(get(y, ySlot).GetStatus()) && state.FinalStatus(get(z, zSlot).GetStatus())
	})
	for _, id := range []string{x, z} {
		slot := map[string]time.Time{x: xSlot, z: zSlot}[id]
		if e := get(id, slot); !state.Interrupted(e) || e.GetAttempts() != 1 || e.GetFinishedUnixMs() != now.UnixMilli() || e.GetError() == "" {
			t.Errorf("%s: stranded execution closed as %v", id, e)
		}
		if n := len(f.prober.attempts(url(id))); n != 0 {
			t.Errorf("%s: %d attempts; its stranded slot was rerun", id, n)
		}
	}
	if e := get(y, ySlot); e.GetStatus() != state.ExecSuccess || e.GetAttempts() != 1 || len(f.prober.attempts(url(y))) != 1 {
		t.Errorf("the stranded latest slot was not rerun: %v", e)
	}
	cs, err := f.store.CheckStatus(x)
	if err != nil {
		t.Fatal(err)
	}
	if cs.GetVerdict() != state.ExecSuccess || cs.GetVerdictSlotUnixMs() != xSlot.Add(-time.Minute).UnixMilli() || cs.GetAlert() != "" {
		t.Fatalf("closing moved the check's verdict: %v", cs)
	}
	if alerts, err := f.store.PendingAlerts(0); err != nil || len(alerts) != 0 {
		t.Fatalf("closing raised alerts: %v %v", alerts, err)
	}
	if st := f.sched.Stats(); st.Interrupted != 2 {
		t.Fatalf("stats %+v", st)
	}
	// The next leader finds nothing left to close.
	f.stop()
	f.clock.Advance(time.Second)
	f.start(Options{})
	if st := f.sched.Stats(); st.Interrupted != 0 {
		t.Fatalf("closed again: %+v", st)
	}
}
