package state

import (
	"strings"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// interrupted is the record a new leader closes a stranded execution of
// slot with.
func interrupted(slot int64) *raftv1.Execution {
	e := execution(slot, ExecFailed)
	e.Error, e.ErrorKind = "interrupted", ErrorInterrupted
	return e
}

// TestInterruptedExecutionIsNoVerdict: an execution closed as interrupted
// (its runner stopped before judging the target) is final, but neither
// changes the check's up/down verdict nor raises or clears an alert.
func TestInterruptedExecutionIsNoVerdict(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	slot := t0
	next := func(e func(int64) *raftv1.Execution) {
		slot += 60_000
		mustOK(t, s, recordCmd(0, e(slot)))
	}
	status := func(s string) func(int64) *raftv1.Execution {
		return func(slot int64) *raftv1.Execution { return execution(slot, s) }
	}
	next(status(ExecSuccess))
	up := slot
	next(status(ExecRunning))
	next(interrupted)
	cs := checkStatus(t, s)
	if cs.GetVerdict() != ExecSuccess || cs.GetVerdictSlotUnixMs() != up || cs.GetLastExecutionUnixMs() != up+100 || cs.GetAlert() != "" {
		t.Fatalf("an interrupted execution moved the verdict: %v", cs)
	}
	if cs.GetLastSlotUnixMs() != slot || cs.GetLastStatus() != ExecFailed {
		t.Fatalf("the newest execution is not the interrupted one: %v", cs)
	}
	if got := alertTypes(t, s); len(got) != 0 {
		t.Fatalf("an interrupted execution alerted: %v", got)
	}
	// A stranded running execution closed later stays closed: a repeat or a
	// late verdict of its slot changes nothing.
	mustOK(t, s, recordCmd(0, interrupted(up+60_000)), recordCmd(0, execution(up+60_000, ExecSuccess)))
	if e, err := s.Execution(checkID, RegionControl, up+60_000); err != nil || !Interrupted(e) {
		t.Fatalf("closed execution %v %v", e, err)
	}
	// Down: one check.failed; an interruption neither recovers nor fails
	// it again.
	next(status(ExecFailed))
	next(interrupted)
	next(status(ExecFailed))
	if cs := checkStatus(t, s); cs.GetVerdict() != ExecFailed || cs.GetAlert() != AlertCheckFailed {
		t.Fatalf("status %v", cs)
	}
	next(status(ExecSuccess))
	if got := alertTypes(t, s); strings.Join(got, ",") != AlertCheckFailed+","+AlertCheckRecovered && strings.Join(got, ",") != AlertCheckRecovered+","+AlertCheckFailed {
		t.Fatalf("alerts %v, want one check.failed and one check.recovered", got)
	}
}
