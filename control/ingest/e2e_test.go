package ingest

import (
	"testing"
	"time"

	"lookout/control/state"
)

// These tests run pings through the real state machine (controltest's
// Cluster applies each batch to a real state.Store).

func TestEndToEndCreatesMonitor(t *testing.T) {
	e := newEnv(t, nil, BatchSettings{})
	acct := e.newAccount("")
	// The first ping creates the monitor and says so; the next do not.
	r := e.post(acct.IngestKey, `{"event_type":"ping","monitor":"nightly-backup","status":"run","project":"infra"}`)
	r.want(t, 200, created)
	if r.header.Get("X-Quota-State") != "ok" || r.header.Get("X-Quota-Used") != "1" {
		t.Errorf("quota headers %v", r.header)
	}
	if _, has := r.header["X-Quota-Limit"]; has {
		t.Error("X-Quota-Limit on a plan without a limit")
	}
	m, err := e.admin.Store.MonitorByName(acct.ID, "ping", "nightly-backup")
	if err != nil {
		t.Fatalf("monitor not created: %v", err)
	}
	e.get(acct.IngestKey, "/ping/nightly-backup?status=complete&duration=12.5").want(t, 200, success)
	evs, err := e.admin.Store.Events(acct.ID, m.GetUuid(), 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("%d events stored, want 2 (%v)", len(evs), err)
	}
}

func TestEndToEndDuplicate(t *testing.T) {
	e := newEnv(t, nil, BatchSettings{})
	acct := e.newAccount("")
	e.post(acct.IngestKey, pingBody, "Idempotency-Key", "run-42").want(t, 200, created)
	r := e.post(acct.IngestKey, `{"event_type":"ping","monitor":"backup","status":"run","event_id":"run-42"}`)
	r.want(t, 200, success)
	if got := r.header.Get("X-Quota-Used"); got != "1" {
		t.Errorf("X-Quota-Used %q after a duplicate, want 1", got)
	}
	if _, events, err := e.admin.Store.Usage(acct.ID, e.clock().UnixMilli()); err != nil || events != 1 {
		t.Fatalf("%d events counted, want 1 (%v)", events, err)
	}
}

func TestEndToEndMonitorLimit(t *testing.T) {
	e := newEnv(t, nil, BatchSettings{})
	acct := e.newAccount(`{"monitor_limit": 1}`)
	e.post(acct.IngestKey, `{"event_type":"ping","monitor":"first","status":"run"}`).want(t, 200, created)
	r := e.get(acct.IngestKey, "/ping/second?status=run")
	if r.status != 403 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if got := r.json(t); got["status"] != "error" || got["code"] != "monitor_limit_reached" || got["message"] == "" {
		t.Fatalf("body %v", got)
	}
	if _, err := e.admin.Store.MonitorByName(acct.ID, "ping", "second"); err == nil {
		t.Fatal("monitor created beyond the limit")
	}
	// Events for the existing monitor are always accepted.
	e.post(acct.IngestKey, `{"event_type":"ping","monitor":"first","status":"complete"}`).want(t, 200, success)
}

func TestEndToEndSuspended(t *testing.T) {
	e := newEnv(t, nil, BatchSettings{})
	acct := e.newAccount(`{"monthly_event_limit": 2, "quota_grace_seconds": 60}`)
	for i, want := range []string{"ok", "warning", "exceeded"} {
		r := e.post(acct.IngestKey, pingBody)
		r.want(t, 200, map[bool]map[string]string{true: created, false: success}[i == 0])
		if got := r.header.Get("X-Quota-State"); got != want || r.header.Get("X-Quota-Limit") != "2" {
			t.Fatalf("ping %d: X-Quota-State %q (limit %q), want %q", i+1, got, r.header.Get("X-Quota-Limit"), want)
		}
	}
	// The grace period runs out: suspended, nothing stored, still 200.
	e.advance(time.Minute)
	r := e.post(acct.IngestKey, pingBody)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := r.json(t)
	if len(got) != 4 || got["status"] != "ok" || got["quota"] != "suspended" ||
		got["resets_at"] != "2026-04-01T00:00:00Z" || got["message"] == "" {
		t.Fatalf("body %v", got)
	}
	if r.header.Get("X-Quota-State") != state.QuotaSuspended || r.header.Get("X-Quota-Used") != "3" ||
		r.header.Get("X-Quota-Reset") != "2026-04-01T00:00:00Z" {
		t.Fatalf("quota headers %v", r.header)
	}
	// A refused ping reads the quota from the local state: suspended too.
	r = e.get(acct.IngestKey, "/ping/backup")
	r.wantError(t, 400, "required field missing: status")
	if got := r.header.Get("X-Quota-State"); got != state.QuotaSuspended {
		t.Fatalf("X-Quota-State %q on a 400, want suspended", got)
	}
	if _, events, _ := e.admin.Store.Usage(acct.ID, e.clock().UnixMilli()); events != 3 {
		t.Fatalf("%d events counted, want 3", events)
	}
}
