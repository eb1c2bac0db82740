package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"lookout/cluster"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestResponseMapping: each outcome of the state machine, and each error of
// the cluster, becomes its answer, with the quota headers of the account.
func TestResponseMapping(t *testing.T) {
	outcomes := map[string]*raftv1.EventResult{
		"stored": {Outcome: raftv1.EventOutcome_EVENT_OUTCOME_STORED,
			Quota: &raftv1.QuotaStatus{State: "ok", Used: 7, ResetsAtUnixMs: nextMonth}},
		"duplicate": {Outcome: raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE,
			Quota: &raftv1.QuotaStatus{State: "warning", Limit: proto.Int64(1000), Used: 850, ResetsAtUnixMs: nextMonth}},
		"limit": {Outcome: raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT,
			Quota: &raftv1.QuotaStatus{State: "ok", Used: 3, ResetsAtUnixMs: nextMonth}},
		"suspended": {Outcome: raftv1.EventOutcome_EVENT_OUTCOME_SUSPENDED,
			Quota: &raftv1.QuotaStatus{State: "suspended", Limit: proto.Int64(1000), Used: 1001, ResetsAtUnixMs: nextMonth}},
		"unspecified": {Quota: &raftv1.QuotaStatus{State: "ok", ResetsAtUnixMs: nextMonth}},
	}
	cl := &cannedCluster{answer: func(ev *raftv1.Event) *raftv1.EventResult { return outcomes[ev.GetMonitor()] }}
	e := newEnv(t, cl, BatchSettings{})
	acct := e.newAccount(`{"monitor_limit": 3}`)
	// controltest's clock: 2026-03-15T12:30:00Z, 16 days 11.5 hours before the reset.
	const resetIn = "1423800"
	type quota struct{ state, limit, used string }
	for _, tc := range []struct {
		name, monitor string
		err           error // of the cluster
		status        int
		body          map[string]string // nil: checked apart
		quota         quota
	}{
		{"stored", "stored", nil, 200, success, quota{"ok", "", "7"}},
		{"duplicate", "duplicate", nil, 200, success, quota{"warning", "1000", "850"}},
		{"monitor limit", "limit", nil, 403, nil, quota{"ok", "", "3"}},
		{"suspended", "suspended", nil, 200, map[string]string{"status": "ok", "quota": "suspended",
			"resets_at": "2026-04-01T00:00:00Z", "message": ""}, quota{"suspended", "1000", "1001"}},
		{"unknown outcome", "unspecified", nil, 500, map[string]string{"error": "internal error"}, quota{"ok", "", "0"}},
		// Without an event result the headers come from the local state:
		// the default plan, nothing counted yet.
		{"no leader", "stored", fmt.Errorf("apply: %w", cluster.ErrNoLeader), 503, map[string]string{"error": "unavailable"}, quota{"ok", "", "0"}},
		{"shutting down", "stored", cluster.ErrShutdown, 503, map[string]string{"error": "unavailable"}, quota{"ok", "", "0"}},
		{"other error", "stored", errors.New("disk on fire"), 500, map[string]string{"error": "internal error"}, quota{"ok", "", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl.fail(tc.err)
			defer cl.fail(nil)
			r := e.post(acct.IngestKey, `{"event_type":"ping","monitor":"`+tc.monitor+`","status":"run"}`)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			got := r.json(t)
			want := tc.body
			if tc.status == 403 {
				// The message names the monitor and the plan's limit.
				want = map[string]string{"status": "error", "code": "monitor_limit_reached", "message": ""}
				if m := got["message"]; !strings.Contains(m, `"limit"`) || !strings.Contains(m, "(3)") {
					t.Errorf("message %q", m)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("body %v, want %v", got, want)
			}
			for k, v := range want {
				// "" stands for any message that is not empty.
				if v == "" && got[k] != "" || v != "" && got[k] == v {
					continue
				}
				t.Errorf("body %v, want %v", got, want)
			}
			if tc.status == 503 && r.header.Get("Retry-After") != "1" {
				t.Errorf("Retry-After %q on a 503", r.header.Get("Retry-After"))
			}
			h := r.header
			if h.Get("X-Quota-State") != tc.quota.state || h.Get("X-Quota-Used") != tc.quota.used ||
				h.Get("X-Quota-Reset") != "2026-04-01T00:00:00Z" || h.Get("X-Quota-Reset-In") != resetIn {
				t.Errorf("quota headers %v", h)
			}
			if _, has := h["X-Quota-Limit"]; has != (tc.quota.limit != "") || h.Get("X-Quota-Limit") != tc.quota.limit {
				t.Errorf("X-Quota-Limit %q, want %q", h.Get("X-Quota-Limit"), tc.quota.limit)
			}
		})
	}
	// Every batch carries the node's retention setting.
	for _, n := range cl.retain {
		if n != 100 {
			t.Fatalf("retention_count %d, want 100", n)
		}
	}
}

// TestMalformedResults: a result that does not answer the batch is a 500,
// not a wrong answer.
func TestMalformedResults(t *testing.T) {
	for name, res := range map[string]*raftv1.Result{
		"refused":           {Status: raftv1.Status_STATUS_INVALID, Message: "bad"},
		"too few results":   {Status: raftv1.Status_STATUS_OK},
		"unspecified state": {},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, resultCluster{res}, BatchSettings{})
			acct := e.newAccount("")
			e.post(acct.IngestKey, pingBody).wantError(t, 500, "internal error")
		})
	}
}

// resultCluster answers every Apply with one result.
type resultCluster struct{ res *raftv1.Result }

func (c resultCluster) Apply(_ context.Context, _ *raftv1.Command) (*raftv1.Result, error) {
	return c.res, nil
}

func (c resultCluster) ConsistentRead(context.Context) error { return nil }

// TestStopped: after Stop, pings are 503.
func TestStopped(t *testing.T) {
	e := newEnv(t, &cannedCluster{}, BatchSettings{})
	acct := e.newAccount("")
	e.post(acct.IngestKey, pingBody).want(t, 200, success)
	e.api.Stop()
	r := e.post(acct.IngestKey, pingBody)
	r.wantError(t, 503, "unavailable")
	if st := e.api.Stats(); st.Batches != 1 || st.Events != 1 || st.Errors != 0 {
		t.Fatalf("stats %+v", st)
	}
}
