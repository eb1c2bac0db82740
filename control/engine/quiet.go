package engine

import (
	"strings"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/maintenance"
)

// quietDue is when the leader must judge monitor m afresh with a
// JudgeAfresh (0: not by time): when its next reminder is due, when its
// pause's until passes, when the
// occurrence of the maintenance window that holds an alert of it ends, and
// at once when what held an alert of it no longer does
// (control/state/quiet.go).
// The state machine judges again whatever the engine thought, so a guess
// that is early costs a stale proposal, never a wrong alert.
func (t *term) quietDue(m *statev1.Monitor) int64 {
	q := m.GetQuiet()
	due := int64(0)
	if q.GetPaused() && q.GetPausedUntilUnixMs() > 0 {
		due = q.GetPausedUntilUnixMs()
	}
	due = earliest(due, q.GetNextReminderUnixMs())
	now := t.d.o.Now()
	switch by := q.GetHeldBy(); {
	case by == state.HeldByPause && !q.GetPaused():
		due = earliest(due, now.UnixMilli())
	case strings.HasPrefix(by, state.HeldByMaintenance):
		w := t.windows[m.GetAccountId()][strings.TrimPrefix(by, state.HeldByMaintenance)]
		end := now // deleted, or no longer holding m
		if o, in := maintenance.Covering(w, now); w != nil && in && maintenance.Matches(w, m.GetUuid(), m.GetTags(), m.GetProject()) {
			end = o.End
		}
		due = earliest(due, end.UnixMilli())
	case strings.HasPrefix(by, state.HeldByDependency):
		// Judged when the dependency is no longer down: now, or when a
		// change of it says so (dependencyChanged).
		id := strings.TrimPrefix(by, state.HeldByDependency)
		dep, err := t.d.o.State.MonitorByUUID(id)
		if err != nil || !state.IsDown(dep) {
			due = earliest(due, now.UnixMilli())
			break
		}
		if t.dependents[id] == nil {
			t.dependents[id] = map[string]struct{}{}
		}
		t.dependents[id][m.GetUuid()] = struct{}{}
	}
	return due
}

// dependencyChanged judges again the monitors held by monitor id (m as a
// change left it; nil: deleted) once it is no longer down.
func (t *term) dependencyChanged(id string, m *statev1.Monitor) {
	held := t.dependents[id]
	if held == nil || (m != nil && state.IsDown(m)) {
		return
	}
	delete(t.dependents, id)
	for dependent := range held {
		t.refresh(dependent)
	}
}

// readWindows reads every account's maintenance windows.
func (t *term) readWindows() error {
	t.windows = map[string]map[string]*raftv1.MaintenanceWindow{}
	return t.d.o.State.AllMaintenanceWindows(func(w *raftv1.MaintenanceWindow) error {
		byID := t.windows[w.GetAccountId()]
		if byID == nil {
			byID = map[string]*raftv1.MaintenanceWindow{}
			t.windows[w.GetAccountId()] = byID
		}
		byID[w.GetId()] = w
		return nil
	})
}

// earliest is the earlier of a and b, ignoring 0 (none).
func earliest(a, b int64) int64 {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
