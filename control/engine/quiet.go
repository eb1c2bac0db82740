package engine

import (
	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// quietDue is when the leader must judge monitor m afresh with a
// JudgeAfresh (0: not by time): when its pause's until passes, and at once
// when what held an alert of it no longer does (control/state/quiet.go).
// The state machine judges again whatever the engine thought, so a guess
// that is early costs a stale proposal, never a wrong alert.
func (t *term) quietDue(m *statev1.Monitor) int64 {
	q := m.GetQuiet()
	due := int64(0)
	if q.GetPaused() && q.GetPausedUntilUnixMs() > 0 {
		due = q.GetPausedUntilUnixMs()
	}
	if by := q.GetHeldBy(); by == state.HeldByPause && !q.GetPaused() {
		due = earliest(due, t.d.o.Now().UnixMilli())
	}
	return due
}

// earliest is the earlier of a and b, ignoring 0 (none).
func earliest(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
