package maintenance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
	"lookout/internal/names"
	"lookout/internal/schedule"
)

// Bounds of a window.
const (
	MaxName        = 255
	MinDuration    = 60                   // seconds
	MaxDuration    = 30 * 24 * 3600       // seconds: 30 days
	MaxLength      = 366 * 24 * time.Hour // a one-off window's length
	MaxMatchItems  = 100                  // monitors, tags and projects, each
	MaxProjectName = manifest.MaxProject
)

// Key is the key of a window's problems in a 422 body.
const Key = "window"

// The codes of a refused window (besides the manifest's name_invalid,
// schedule_invalid, timezone_invalid, field_unknown and invalid_json).
const (
	CodeTimesInvalid     = "window_times_invalid"
	CodeDurationRange    = "duration_out_of_range"
	CodeMatchInvalid     = "match_invalid"
	CodeWindowLimit      = "window_limit_reached"
	windowFormsExplained = "give starts_at and ends_at (one-off), or schedule and duration_seconds (recurring)"
)

// Options is what validation needs to know of the account and the time.
type Options struct {
	// Now is the time of the request: a window must end after it.
	Now time.Time
	// MonitorExists tells whether the account has a monitor of that
	// uuid (nil: not checked).
	MonitorExists func(uuid string) bool
}

// Parse decodes and validates a window's JSON (id and status are read-only
// and ignored) and returns it as the state stores it (without id, account
// and times of creation), with every problem at once.
func Parse(raw []byte, o Options) (*raftv1.MaintenanceWindow, manifest.Errors) {
	p := &parser{}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		p.add("", manifest.CodeInvalidJSON, "the window must be a JSON object")
		return nil, p.errs
	}
	w := &raftv1.MaintenanceWindow{Match: &raftv1.WindowMatch{}}
	w.Name = p.str(fields, "name", manifest.CodeNameInvalid)
	switch n := utf8.RuneCountInString(w.Name); {
	case n < 1 || n > MaxName:
		p.add("name", manifest.CodeNameInvalid, fmt.Sprintf("name must be 1 to %d characters long", MaxName))
	case names.Check(w.Name) != nil:
		p.add("name", manifest.CodeNameInvalid, "name "+names.Check(w.Name).Error())
	}
	oneOff := present(fields, "starts_at") || present(fields, "ends_at")
	recurring := present(fields, "schedule") || present(fields, "duration_seconds")
	switch {
	case oneOff && recurring:
		p.add("starts_at", CodeTimesInvalid, "a window is one-off or recurring, not both: "+windowFormsExplained)
	case oneOff:
		p.oneOff(fields, w, o.Now)
	case recurring:
		p.recurring(fields, w)
	default:
		p.add("starts_at", CodeTimesInvalid, "when is missing: "+windowFormsExplained)
	}
	p.match(fields, w.Match, o)
	var extra []string
	for k := range fields {
		switch k {
		case "id", "status", "name", "starts_at", "ends_at", "schedule", "timezone", "duration_seconds", "match":
		default:
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		p.add(k, manifest.CodeFieldUnknown, k+" is not a field of a maintenance window")
	}
	return w, p.errs
}

// parser collects a window's problems.
type parser struct{ errs manifest.Errors }

func (p *parser) add(field, code, msg string) {
	p.errs = append(p.errs, manifest.Error{Field: field, Code: code, Message: msg})
}

// present tells whether key is there and not null.
func present(fields map[string]json.RawMessage, key string) bool {
	r, ok := fields[key]
	return ok && string(r) != "null"
}

// str decodes a string (absent: ""); a wrong type is code.
func (p *parser) str(fields map[string]json.RawMessage, key, code string) string {
	var s string
	if present(fields, key) && json.Unmarshal(fields[key], &s) != nil {
		p.add(key, code, key+" must be a string")
	}
	return s
}

// time decodes an RFC 3339 time; ok false (recorded) when it is absent or
// not one.
func (p *parser) time(fields map[string]json.RawMessage, key string) (time.Time, bool) {
	s := p.str(fields, key, CodeTimesInvalid)
	t, err := time.Parse(time.RFC3339, s)
	if s == "" || err != nil {
		p.add(key, CodeTimesInvalid, key+" must be an RFC 3339 time such as 2026-03-15T22:00:00Z")
		return time.Time{}, false
	}
	return t, true
}

// oneOff decodes starts_at and ends_at: ends_at after starts_at and after
// now (a window that has ended could hold nothing), at most 366 days long.
func (p *parser) oneOff(fields map[string]json.RawMessage, w *raftv1.MaintenanceWindow, now time.Time) {
	start, okS := p.time(fields, "starts_at")
	end, okE := p.time(fields, "ends_at")
	if present(fields, "timezone") {
		p.add("timezone", manifest.CodeTimezoneInvalid, "timezone is only for a recurring window's schedule; starts_at and ends_at carry their offset")
	}
	if !okS || !okE {
		return
	}
	switch {
	case !end.After(start):
		p.add("ends_at", CodeTimesInvalid, "ends_at must be after starts_at")
	case !end.After(now):
		p.add("ends_at", CodeTimesInvalid, "ends_at is in the past: the window could hold nothing")
	case end.Sub(start) > MaxLength:
		p.add("ends_at", CodeTimesInvalid, "a window may last at most 366 days")
	}
	w.StartsUnixMs, w.EndsUnixMs = start.UnixMilli(), end.UnixMilli()
}

// recurring decodes schedule, timezone and duration_seconds.
func (p *parser) recurring(fields map[string]json.RawMessage, w *raftv1.MaintenanceWindow) {
	zone := p.str(fields, "timezone", manifest.CodeTimezoneInvalid)
	if present(fields, "timezone") {
		if _, err := schedule.LoadZone(zone); err != nil || zone == "" {
			p.add("timezone", manifest.CodeTimezoneInvalid, "timezone must be an IANA time zone name such as Europe/Berlin or UTC")
			zone = ""
		}
	}
	if zone == "" {
		zone = schedule.DefaultZone
	}
	spec := p.str(fields, "schedule", manifest.CodeScheduleInvalid)
	if sc, err := schedule.ParseIn(spec, zone); spec == "" || err != nil {
		why := "is required with duration_seconds: a cron expression such as \"0 2 * * 2\" or an interval such as 1d"
		if err != nil && spec != "" {
			why = "is invalid: " + strings.TrimPrefix(err.Error(), schedule.ErrInvalid.Error()+": ")
		}
		p.add("schedule", manifest.CodeScheduleInvalid, "schedule "+why)
	} else {
		w.Schedule = sc.String()
	}
	w.Timezone = zone
	var d float64
	r, ok := fields["duration_seconds"]
	switch {
	case !ok || string(r) == "null":
		p.add("duration_seconds", CodeDurationRange, fmt.Sprintf("duration_seconds is required with a schedule: %d to %d", MinDuration, MaxDuration))
	case json.Unmarshal(r, &d) != nil || d != float64(int64(d)) || d < MinDuration || d > MaxDuration:
		p.add("duration_seconds", CodeDurationRange, fmt.Sprintf("duration_seconds must be an integer from %d to %d", MinDuration, MaxDuration))
	default:
		w.DurationSeconds = int64(d)
	}
}

// match decodes match: {monitors: [uuid of the account], tags: [tag],
// projects: [project]}, each at most MaxMatchItems. Unknown tags and
// projects are allowed (they match nothing until a monitor has them).
func (p *parser) match(fields map[string]json.RawMessage, m *raftv1.WindowMatch, o Options) {
	if !present(fields, "match") {
		return
	}
	var sub map[string]json.RawMessage
	if err := json.Unmarshal(fields["match"], &sub); err != nil || sub == nil {
		p.add("match", CodeMatchInvalid, "match must be an object {monitors, tags, projects}")
		return
	}
	list := func(key string) []string {
		var out []string
		if present(sub, key) && json.Unmarshal(sub[key], &out) != nil {
			p.add("match."+key, CodeMatchInvalid, "match."+key+" must be an array of strings")
			return nil
		}
		if len(out) > MaxMatchItems {
			p.add("match."+key, CodeMatchInvalid, fmt.Sprintf("match.%s may hold at most %d entries", key, MaxMatchItems))
			return nil
		}
		return out
	}
	m.Monitors, m.Tags, m.Projects = list("monitors"), list("tags"), list("projects")
	for i, id := range m.Monitors {
		if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
			p.add("match.monitors", CodeMatchInvalid, fmt.Sprintf("match.monitors item %d is not a monitor's uuid", i))
		} else if o.MonitorExists != nil && !o.MonitorExists(id) {
			p.add("match.monitors", CodeMatchInvalid, fmt.Sprintf("match.monitors item %d names no monitor of the account: %s", i, id))
		}
	}
	for i, t := range m.Tags {
		if n := utf8.RuneCountInString(t); n < 1 || n > manifest.MaxTagLen || names.Check(t) != nil {
			p.add("match.tags", CodeMatchInvalid, fmt.Sprintf("match.tags item %d is not a tag (1 to %d characters, printable)", i, manifest.MaxTagLen))
		}
	}
	for i, pr := range m.Projects {
		if n := utf8.RuneCountInString(pr); n < 1 || n > MaxProjectName || names.Check(pr) != nil {
			p.add("match.projects", CodeMatchInvalid, fmt.Sprintf("match.projects item %d is not a project (1 to %d characters, printable)", i, MaxProjectName))
		}
	}
	for k := range sub {
		if k != "monitors" && k != "tags" && k != "projects" {
			p.add("match."+k, CodeMatchInvalid, "match."+k+" is not a field of match (monitors, tags, projects)")
		}
	}
}
