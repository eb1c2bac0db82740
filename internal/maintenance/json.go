package maintenance

import (
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// JSON is a window as the APIs answer it: one-off (starts_at, ends_at) or
// recurring (schedule, duration_seconds, timezone), its match, and its
// read-only status.
type JSON struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	StartsAt        *time.Time `json:"starts_at,omitempty"`
	EndsAt          *time.Time `json:"ends_at,omitempty"`
	Schedule        string     `json:"schedule,omitempty"`
	DurationSeconds int64      `json:"duration_seconds,omitempty"`
	Timezone        string     `json:"timezone,omitempty"`
	Match           MatchJSON  `json:"match"`
	Status          StatusJSON `json:"status"`
}

// MatchJSON is a window's match; every list is there, [] when empty.
type MatchJSON struct {
	Monitors []string `json:"monitors"`
	Tags     []string `json:"tags"`
	Projects []string `json:"projects"`
}

// StatusJSON says whether a window holds now: active with the end of the
// occurrence under way, and when the next one starts (null: none).
type StatusJSON struct {
	Active       bool       `json:"active"`
	EndsAt       *time.Time `json:"ends_at"`
	NextStartsAt *time.Time `json:"next_starts_at"`
}

// ToJSON is w as the APIs answer it at now.
func ToJSON(w *raftv1.MaintenanceWindow, now time.Time) JSON {
	out := JSON{ID: w.GetId(), Name: w.GetName(), Schedule: w.GetSchedule(), Match: MatchJSON{
		Monitors: nonNil(w.GetMatch().GetMonitors()), Tags: nonNil(w.GetMatch().GetTags()), Projects: nonNil(w.GetMatch().GetProjects()),
	}}
	if w.GetSchedule() == "" {
		out.StartsAt, out.EndsAt = utc(w.GetStartsUnixMs()), utc(w.GetEndsUnixMs())
	} else {
		out.DurationSeconds, out.Timezone = w.GetDurationSeconds(), w.GetTimezone()
	}
	if o, ok := Covering(w, now); ok {
		out.Status.Active, out.Status.EndsAt = true, utc(o.End.UnixMilli())
	}
	if o, ok := Next(w, now); ok {
		out.Status.NextStartsAt = utc(o.Start.UnixMilli())
	}
	return out
}

func utc(ms int64) *time.Time {
	t := time.UnixMilli(ms).UTC()
	return &t
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
