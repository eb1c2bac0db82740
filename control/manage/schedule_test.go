package manage_test

import (
	"context"
	"slices"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestScheduledPingMonitor: schedule and timezone on a ping manifest are
// stored, shown, exported and diffed; the status has next_expected_at (the
// first schedule time after creation before the first ping, after the last
// ping then) beside next_deadline_at; bad schedules and zones are 422 with
// their codes.
func TestScheduledPingMonitor(t *testing.T) {
	a := newAPI(t) // the clock stands at 2026-03-15T12:30:00Z, 08:30 in New York
	status, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"schedule": " 30 2 * * * ", "timezone": "America/New_York", "grace_seconds": 600}))
	if status != 201 || m["schedule"] != "30 2 * * *" || m["timezone"] != "America/New_York" || m["expected_interval_seconds"] != nil {
		t.Fatalf("create: %d %v", status, m)
	}
	id := m["uuid"].(string)
	_, got, _ := a.do("GET", "/api/v1/monitors/"+id, nil)
	st := got["status"].(map[string]any)
	if st["state"] != "new" || st["next_expected_at"] != "2026-03-16T06:30:00Z" || st["next_deadline_at"] != nil {
		t.Fatalf("status before the first ping: %v", st)
	}
	at := a.srv.Now.UnixMilli()
	if _, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{
		{AccountId: a.acct.ID, Monitor: "backup", EventType: "ping", Status: "complete", ReceivedUnixMs: at},
	}}}}); err != nil {
		t.Fatal(err)
	}
	_, got, _ = a.do("GET", "/api/v1/monitors/"+id, nil)
	st = got["status"].(map[string]any)
	if st["state"] != "up" || st["next_expected_at"] != "2026-03-16T06:30:00Z" || st["next_deadline_at"] != "2026-03-16T06:40:00Z" {
		t.Fatalf("status after a ping: %v", st)
	}

	// Without a timezone the schedule is read in UTC, and says so.
	_, u, _ := a.do("POST", "/api/v1/monitors", ping("report", map[string]any{"schedule": "@daily"}))
	if u["timezone"] != "UTC" {
		t.Fatalf("default zone: %v", u)
	}

	for _, tc := range []struct {
		extra map[string]any
		want  []string
	}{
		{map[string]any{"schedule": "@daily", "timezone": "Europe/Atlantis"}, []string{"timezone_invalid"}},
		{map[string]any{"schedule": "@daily", "timezone": "Local"}, []string{"timezone_invalid"}},
		{map[string]any{"schedule": "@daily", "expected_interval_seconds": 3600}, []string{"schedule_conflict"}},
		{map[string]any{"schedule": "0 0 30 2 *"}, []string{"schedule_invalid"}},
		{map[string]any{"schedule": "TZ=Europe/Berlin 0 0 * * *"}, []string{"schedule_invalid"}},
		{map[string]any{"schedule": "@reboot"}, []string{"schedule_invalid"}},
	} {
		status, body, _ := a.do("POST", "/api/v1/monitors", ping("bad", tc.extra))
		if got := codes(body, "manifest"); status != 422 || !slices.Equal(got, tc.want) {
			t.Errorf("%v: %d %v, want 422 %v", tc.extra, status, body, tc.want)
		}
	}
	// A check takes a timezone too.
	chk := httpCheck("site", "https://example.com/")
	chk["schedule"], chk["timezone"] = "0 9 * * MON-FRI", "Europe/Berlin"
	if status, body, _ := a.do("POST", "/api/v1/monitors", chk); status != 201 || body["timezone"] != "Europe/Berlin" {
		t.Fatalf("check with a zone: %d %v", status, body)
	}

	// Export carries both fields; applying it back changes nothing; a new
	// zone is an update whose diff names it.
	_, export, _ := a.do("GET", "/api/v1/monitors/export", nil)
	status, rep, _ := a.do("POST", "/api/v1/monitors/apply", export)
	if s := summary(rep); status != 200 || s["unchanged"] != 3 || s["update"] != 0 {
		t.Fatalf("export applied back: %d %v", status, rep)
	}
	for _, e := range export["monitors"].([]any) {
		if e := e.(map[string]any); e["name"] == "backup" {
			if e["schedule"] != "30 2 * * *" || e["timezone"] != "America/New_York" {
				t.Fatalf("exported %v", e)
			}
			e["timezone"] = "Europe/Berlin"
		}
	}
	status, rep, _ = a.do("POST", "/api/v1/monitors/apply?dry_run=true", export)
	changes := rep["changes"].([]any)
	if status != 200 || len(changes) != 1 || toJSON(changes[0].(map[string]any)["diff"]) != `{"timezone":["America/New_York","Europe/Berlin"]}` {
		t.Fatalf("dry run with a new zone: %d %v", status, rep)
	}
}
