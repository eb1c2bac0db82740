package manage_test

import (
	"context"
	"testing"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// GET /api/v1/monitors?include=status adds each monitor's status, as GET
// /api/v1/monitors/{uuid} has it; without it the list is manifests only.
func TestListIncludeStatus(t *testing.T) {
	a := newAPI(t)
	a.do("POST", "/api/v1/monitors", ping("backup", nil))
	a.do("POST", "/api/v1/monitors", httpCheck("site", "https://example.com/"))
	a.srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{
		{AccountId: a.acct.ID, Monitor: "backup", EventType: "ping", Status: "complete", ReceivedUnixMs: a.srv.Now.UnixMilli()},
	}}}})

	status, body, _ := a.do("GET", "/api/v1/monitors?include=status", nil)
	list, _ := body["monitors"].([]any)
	if status != 200 || len(list) != 2 {
		t.Fatalf("%d %v", status, body)
	}
	states := map[string]any{}
	for _, m := range list {
		m := m.(map[string]any)
		st, _ := m["status"].(map[string]any)
		states[m["name"].(string)] = st["state"]
	}
	if states["backup"] != "up" || states["site"] != "pending" {
		t.Errorf("states %v", states)
	}
	// A page keeps them too.
	if _, body, _ := a.do("GET", "/api/v1/monitors?include=status&limit=1", nil); body["next_cursor"] == nil ||
		body["monitors"].([]any)[0].(map[string]any)["status"] == nil {
		t.Errorf("page: %v", body)
	}

	_, body, _ = a.do("GET", "/api/v1/monitors", nil)
	for _, m := range body["monitors"].([]any) {
		if _, has := m.(map[string]any)["status"]; has {
			t.Errorf("status without include=status: %v", m)
		}
	}
	if status, _, _ := a.do("GET", "/api/v1/monitors?include=everything", nil); status != 400 {
		t.Errorf("include=everything: %d, want 400", status)
	}
}

// A ping monitor set to enabled: false is paused at once, in the API and
// for the deadline engine (no deadline while disabled); enabled again, it
// is judged afresh from that moment, not from its last ping before.
func TestDisabledPingMonitorIsPausedAtOnce(t *testing.T) {
	a := newAPI(t)
	_, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"expected_interval_seconds": 3600}))
	id := m["uuid"].(string)
	// The last ping was two hours ago: its missed deadline has passed.
	twoHoursAgo := a.srv.Now.Add(-2 * time.Hour)
	a.srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{
		{AccountId: a.acct.ID, Monitor: "backup", EventType: "ping", Status: "complete", ReceivedUnixMs: twoHoursAgo.UnixMilli()},
	}}}})
	status := func() map[string]any {
		t.Helper()
		code, got, _ := a.do("GET", "/api/v1/monitors/"+id, nil)
		st, _ := got["status"].(map[string]any)
		if code != 200 || st == nil {
			t.Fatalf("GET: %d %v", code, got)
		}
		return st
	}
	if st := status(); st["state"] != "up" || st["next_deadline_at"] != "2026-03-15T11:30:00Z" {
		t.Fatalf("before: %v", st)
	}

	m["enabled"] = false
	if code, body, _ := a.do("PUT", "/api/v1/monitors/"+id, m); code != 200 {
		t.Fatalf("PUT enabled false: %d %v", code, body)
	}
	if st := status(); st["state"] != "paused" || st["next_deadline_at"] != nil || st["last_ping_at"] != "2026-03-15T10:30:00Z" {
		t.Fatalf("disabled: %v, want paused with no deadline", st)
	}
	// The deadline engine has nothing to judge: the passed missed
	// deadline changes nothing.
	res, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_FireDeadline{FireDeadline: &raftv1.FireDeadline{
		AccountId: a.acct.ID, MonitorUuid: id, Kind: "missed", DueUnixMs: twoHoursAgo.Add(time.Hour).UnixMilli()}}})
	if err != nil || !res.GetStale() {
		t.Fatalf("deadline while disabled: %v %v, want stale", res, err)
	}
	if st := status(); st["state"] != "paused" {
		t.Fatalf("after a deadline: %v", st)
	}

	// Enabled again: up, its next deadline an interval from now, not
	// from the ping before the pause (which would be missed at once).
	m["enabled"] = true
	if code, body, _ := a.do("PUT", "/api/v1/monitors/"+id, m); code != 200 {
		t.Fatalf("PUT enabled true: %d %v", code, body)
	}
	if st := status(); st["state"] != "up" || st["next_deadline_at"] != "2026-03-15T13:30:00Z" {
		t.Fatalf("enabled again: %v, want up with a deadline an hour from the change", st)
	}

	// Created disabled: paused from the start.
	_, off, _ := a.do("POST", "/api/v1/monitors", ping("off", map[string]any{"enabled": false}))
	_, got, _ := a.do("GET", "/api/v1/monitors/"+off["uuid"].(string), nil)
	if st, _ := got["status"].(map[string]any); st["state"] != "paused" {
		t.Fatalf("created disabled: %v", got)
	}
}
