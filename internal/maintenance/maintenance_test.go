package maintenance

import (
	"slices"
	"strings"
	"testing"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

var now = time.Date(2026, time.March, 17, 10, 0, 0, 0, time.UTC) // a Tuesday

func TestCoveringOneOffAndRecurring(t *testing.T) {
	oneOff := &raftv1.MaintenanceWindow{StartsUnixMs: now.UnixMilli(), EndsUnixMs: now.Add(time.Hour).UnixMilli()}
	// Tuesdays 02:00 to 04:00 in Berlin (UTC+1 in March before the 29th).
	tuesdays := &raftv1.MaintenanceWindow{Schedule: "0 2 * * 2", Timezone: "Europe/Berlin", DurationSeconds: 7200}
	day := time.Date(2026, time.March, 17, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		w     *raftv1.MaintenanceWindow
		at    time.Time
		in    bool
		endAt time.Time
	}{
		{oneOff, now.Add(-time.Millisecond), false, time.Time{}},
		{oneOff, now, true, now.Add(time.Hour)},
		{oneOff, now.Add(time.Hour - time.Millisecond), true, now.Add(time.Hour)},
		{oneOff, now.Add(time.Hour), false, time.Time{}},
		{tuesdays, day.Add(59 * time.Minute), false, time.Time{}},
		{tuesdays, day.Add(time.Hour), true, day.Add(3 * time.Hour)},
		{tuesdays, day.Add(3*time.Hour - time.Millisecond), true, day.Add(3 * time.Hour)},
		{tuesdays, day.Add(3 * time.Hour), false, time.Time{}},
		{tuesdays, day.Add(25 * time.Hour), false, time.Time{}},
	} {
		o, in := Covering(tc.w, tc.at)
		if in != tc.in || (in && !o.End.Equal(tc.endAt)) {
			t.Errorf("%v at %v: %v %v, want %v ending %v", tc.w, tc.at, in, o, tc.in, tc.endAt)
		}
	}
	if o, ok := Next(tuesdays, day.Add(2*time.Hour)); !ok || !o.Start.Equal(day.Add(7*24*time.Hour+time.Hour)) {
		t.Errorf("next: %v %v", o, ok)
	}
	if _, ok := Next(oneOff, now); ok {
		t.Error("a one-off window that started has a next occurrence")
	}
}

func TestMatches(t *testing.T) {
	w := &raftv1.MaintenanceWindow{Match: &raftv1.WindowMatch{Monitors: []string{"m1"}, Tags: []string{"db"}, Projects: []string{"billing"}}}
	for _, tc := range []struct {
		uuid, project string
		tags          []string
		want          bool
	}{
		{"m1", "", nil, true}, {"m2", "", []string{"web", "db"}, true}, {"m2", "billing", nil, true},
		{"m2", "other", []string{"web"}, false}, {"m2", "", nil, false},
	} {
		if got := Matches(w, tc.uuid, tc.tags, tc.project); got != tc.want {
			t.Errorf("%+v: %v", tc, got)
		}
	}
	if !Matches(&raftv1.MaintenanceWindow{}, "any", nil, "") {
		t.Error("an empty match is not the whole account")
	}
}

func TestParseCodes(t *testing.T) {
	o := Options{Now: now, MonitorExists: func(id string) bool { return id == "11111111-2222-4333-8444-555555555555" }}
	at := func(d time.Duration) string { return `"` + now.Add(d).Format(time.RFC3339) + `"` }
	for _, tc := range []struct {
		body string
		want []string
	}{
		{`{"name":"patch","starts_at":` + at(time.Hour) + `,"ends_at":` + at(2*time.Hour) + `}`, nil},
		{`{"name":"patch","schedule":"0 2 * * 2","duration_seconds":7200,"timezone":"Europe/Berlin","match":{"tags":["no-such-tag"],"projects":["billing"],"monitors":["11111111-2222-4333-8444-555555555555"]}}`, nil},
		{`{"id":"ignored","status":{},"name":"patch","schedule":"1d","duration_seconds":60}`, nil},
		{`[]`, []string{"invalid_json"}},
		{`{"starts_at":` + at(time.Hour) + `,"ends_at":` + at(2*time.Hour) + `}`, []string{"name_invalid"}},
		{`{"name":"patch","starts_at":` + at(2*time.Hour) + `,"ends_at":` + at(time.Hour) + `}`, []string{"window_times_invalid"}},
		{`{"name":"patch","starts_at":` + at(-2*time.Hour) + `,"ends_at":` + at(-time.Hour) + `}`, []string{"window_times_invalid"}},
		{`{"name":"patch","starts_at":` + at(0) + `,"ends_at":` + at(400*24*time.Hour) + `}`, []string{"window_times_invalid"}},
		{`{"name":"patch","starts_at":"tomorrow","ends_at":` + at(time.Hour) + `}`, []string{"window_times_invalid"}},
		{`{"name":"patch","ends_at":` + at(time.Hour) + `}`, []string{"window_times_invalid"}},
		{`{"name":"patch"}`, []string{"window_times_invalid"}},
		{`{"name":"patch","starts_at":` + at(0) + `,"ends_at":` + at(time.Hour) + `,"schedule":"1d","duration_seconds":60}`, []string{"window_times_invalid"}},
		{`{"name":"patch","starts_at":` + at(0) + `,"ends_at":` + at(time.Hour) + `,"timezone":"UTC"}`, []string{"timezone_invalid"}},
		{`{"name":"patch","schedule":"0 0 30 2 *","duration_seconds":60}`, []string{"schedule_invalid"}},
		{`{"name":"patch","duration_seconds":60}`, []string{"schedule_invalid"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":59}`, []string{"duration_out_of_range"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":2592001}`, []string{"duration_out_of_range"}},
		{`{"name":"patch","schedule":"1d"}`, []string{"duration_out_of_range"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":60,"timezone":"Mars/Olympus"}`, []string{"timezone_invalid"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":60,"match":[]}`, []string{"match_invalid"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":60,"match":{"monitors":["nope"]}}`, []string{"match_invalid"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":60,"match":{"monitors":["00000000-0000-4000-8000-000000000000"]}}`, []string{"match_invalid"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":60,"match":{"tags":[""],"kinds":[]}}`, []string{"match_invalid", "match_invalid"}},
		{`{"name":"patch","schedule":"1d","duration_seconds":60,"until":1}`, []string{"field_unknown"}},
	} {
		w, errs := Parse([]byte(tc.body), o)
		if got := errs.Codes(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v (%s), want %v", tc.body, got, strings.Join(errs.Messages(), "; "), tc.want)
		}
		if len(tc.want) == 0 && w.GetName() != "patch" {
			t.Errorf("%s: parsed %v", tc.body, w)
		}
	}
}
