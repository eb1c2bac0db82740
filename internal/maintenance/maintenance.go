// Package maintenance is the one definition of maintenance windows
// (decisions.md 12): their JSON form and its validation with stable codes,
// which monitors a window matches, and when it holds them. The Management
// API and the panel parse windows with it; the state machine and the
// leader's deadline engine judge them with it, so all agree.
//
// A window is one-off (starts_at to ends_at) or recurring (every time of a
// schedule read in a zone, the same cron as checks and ping monitors, for
// duration_seconds). Times are judged on the times the caller gives (the
// state machine's are the leader's stamps): nothing here reads the clock.
package maintenance

import (
	"slices"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/schedule"
)

// Occurrence is one stretch of time a window holds, [Start, End).
type Occurrence struct {
	Start, End time.Time
}

// Covering returns the occurrence of w that holds at, if any: a one-off
// window's own time, or a recurring window's latest start at or before
// at while it lasts (occurrences all last as long, so the latest start
// ends last).
func Covering(w *raftv1.MaintenanceWindow, at time.Time) (Occurrence, bool) {
	if w.GetSchedule() == "" {
		o := Occurrence{Start: time.UnixMilli(w.GetStartsUnixMs()), End: time.UnixMilli(w.GetEndsUnixMs())}
		return o, !at.Before(o.Start) && at.Before(o.End)
	}
	sc, err := schedule.ParseIn(w.GetSchedule(), w.GetTimezone())
	if err != nil {
		return Occurrence{}, false // validated when stored: cannot happen
	}
	start := sc.Prev(at.Add(time.Millisecond))
	if start.IsZero() {
		return Occurrence{}, false
	}
	o := Occurrence{Start: start, End: start.Add(time.Duration(w.GetDurationSeconds()) * time.Second)}
	return o, at.Before(o.End)
}

// Next returns the first occurrence of w that starts after at (false:
// none, a one-off window that has started).
func Next(w *raftv1.MaintenanceWindow, at time.Time) (Occurrence, bool) {
	if w.GetSchedule() == "" {
		o := Occurrence{Start: time.UnixMilli(w.GetStartsUnixMs()), End: time.UnixMilli(w.GetEndsUnixMs())}
		return o, o.Start.After(at)
	}
	sc, err := schedule.ParseIn(w.GetSchedule(), w.GetTimezone())
	if err != nil {
		return Occurrence{}, false
	}
	start := sc.Next(at)
	if start.IsZero() {
		return Occurrence{}, false
	}
	return Occurrence{Start: start, End: start.Add(time.Duration(w.GetDurationSeconds()) * time.Second)}, true
}

// Matches tells whether w holds the monitor with uuid, tags and project:
// one of them is in its match, or its match is empty (the whole account).
// Unknown tags and projects match nothing.
func Matches(w *raftv1.MaintenanceWindow, uuid string, tags []string, project string) bool {
	m := w.GetMatch()
	if len(m.GetMonitors())+len(m.GetTags())+len(m.GetProjects()) == 0 {
		return true
	}
	if slices.Contains(m.GetMonitors(), uuid) || (project != "" && slices.Contains(m.GetProjects(), project)) {
		return true
	}
	for _, t := range tags {
		if slices.Contains(m.GetTags(), t) {
			return true
		}
	}
	return false
}
