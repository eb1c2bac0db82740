package manage_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func bundle(ms ...map[string]any) map[string]any {
	list := make([]any, len(ms))
	for i, m := range ms {
		list[i] = m
	}
	return map[string]any{"manifest_version": 1, "monitors": list}
}

func summary(body map[string]any) map[string]float64 {
	out := map[string]float64{}
	for k, v := range body["summary"].(map[string]any) {
		out[k] = v.(float64)
	}
	return out
}

func TestApply(t *testing.T) {
	a := newAPI(t)
	_, manual, _ := a.do("POST", "/api/v1/monitors", ping("made-by-hand", nil))
	b := bundle(ping("backup", map[string]any{"tags": []string{"db", "nightly"}}), httpCheck("site", "https://example.com/"))
	applied := a.srv.Store.AppliedIndex()

	// A dry run reports and writes nothing.
	status, body, _ := a.do("POST", "/api/v1/monitors/apply?dry_run=true", b)
	if s := summary(body); status != 200 || body["dry_run"] != true || s["create"] != 2 || s["update"] != 0 || s["unchanged"] != 0 || s["orphaned"] != 1 {
		t.Fatalf("dry run: %d %v", status, body)
	}
	if orphans := body["orphaned"].([]any); len(orphans) != 1 || orphans[0].(map[string]any)["uuid"] != manual["uuid"] {
		t.Fatalf("orphans: %v", orphans)
	}
	if a.srv.Store.AppliedIndex() != applied {
		t.Fatal("a dry run wrote")
	}
	// The real apply creates both, in one raft entry.
	status, body, _ = a.do("POST", "/api/v1/monitors/apply", b)
	if s := summary(body); status != 200 || body["dry_run"] != false || s["create"] != 2 || s["orphaned"] != 1 {
		t.Fatalf("apply: %d %v", status, body)
	}
	if a.srv.Store.AppliedIndex() != applied+1 {
		t.Fatalf("apply wrote %d entries, want 1", a.srv.Store.AppliedIndex()-applied)
	}
	// Idempotent: the same bundle is all unchanged and writes nothing.
	applied = a.srv.Store.AppliedIndex()
	status, body, _ = a.do("POST", "/api/v1/monitors/apply", b)
	if s := summary(body); status != 200 || s["unchanged"] != 2 || s["create"] != 0 || s["update"] != 0 || len(body["changes"].([]any)) != 0 {
		t.Fatalf("unchanged apply: %d %v", status, body)
	}
	if a.srv.Store.AppliedIndex() != applied {
		t.Fatal("an unchanged apply wrote")
	}
	// An export applies back unchanged.
	status, export, _ := a.do("GET", "/api/v1/monitors/export", nil)
	if status != 200 || len(export["monitors"].([]any)) != 3 || strings.Contains(toJSON(export), "uuid") {
		t.Fatalf("export: %d %v", status, export)
	}
	if _, body, _ := a.do("POST", "/api/v1/monitors/apply", export); summary(body)["unchanged"] != 3 {
		t.Fatalf("export applied back: %v", body)
	}
	// An update shows the field diff; tag order is kept as sent.
	b2 := bundle(ping("backup", map[string]any{"tags": []string{"nightly", "db"}, "timeout_seconds": 900}), httpCheck("site", "https://example.com/"))
	status, body, _ = a.do("POST", "/api/v1/monitors/apply", b2)
	changes := body["changes"].([]any)
	if status != 200 || summary(body)["update"] != 1 || len(changes) != 1 {
		t.Fatalf("update: %d %v", status, body)
	}
	diff := changes[0].(map[string]any)["diff"].(map[string]any)
	if toJSON(diff["timeout_seconds"]) != "[600,900]" || toJSON(diff["tags"]) != `[["db","nightly"],["nightly","db"]]` || changes[0].(map[string]any)["uuid"] == nil {
		t.Fatalf("diff: %v", changes[0])
	}
}

func TestApplyAllOrNothing(t *testing.T) {
	a := newAPI(t)
	applied := a.srv.Store.AppliedIndex()
	for _, tc := range []struct {
		name string
		body any
		key  string
		code string
	}{
		{"invalid entry", bundle(ping("ok", nil), ping("bad", map[string]any{"timeout_seconds": 0})), "monitors.1", "timeout_out_of_range"},
		{"entry not an object", map[string]any{"manifest_version": 1, "monitors": []any{ping("ok", nil), 5}}, "monitors.1", "entry_not_object"},
		{"duplicate entry", bundle(ping("twice", nil), ping("twice", nil)), "monitors.1", "duplicate_entry"},
		{"wrong manifest_version", map[string]any{"manifest_version": 2, "monitors": []any{}}, "bundle", "bundle_invalid"},
		{"not an object", []any{1}, "bundle", "bundle_invalid"},
		{"no monitors", map[string]any{"manifest_version": 1}, "bundle", "monitors_missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := a.do("POST", "/api/v1/monitors/apply", tc.body)
			if status != 422 || !contains(codes(body, tc.key), tc.code) {
				t.Fatalf("%d %v, want 422 with %s at %s", status, body, tc.code, tc.key)
			}
			if a.srv.Store.AppliedIndex() != applied {
				t.Fatal("a refused bundle wrote")
			}
		})
	}
	// The state machine's own refusal names the entry too: a name taken by
	// a monitor of the other check kind, and the plan's limit.
	a.do("POST", "/api/v1/monitors", map[string]any{"manifest_version": 1, "kind": "ssl_check", "name": "site", "schedule": "1h", "config": map[string]any{"domain": "example.com"}})
	if status, body, _ := a.do("POST", "/api/v1/monitors/apply", bundle(ping("fine", nil), httpCheck("site", "https://example.com"))); status != 422 || !contains(codes(body, "monitors.1"), "name_taken_by_other_kind") {
		t.Fatalf("other kind: %d %v", status, body)
	}
	limit := int64(2)
	a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_SetPlan{SetPlan: &raftv1.SetPlan{
		AccountId: a.acct.ID, Plan: &raftv1.Plan{Name: "small", MonitorLimit: &limit, ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20},
	}}})
	applied = a.srv.Store.AppliedIndex()
	if status, body, _ := a.do("POST", "/api/v1/monitors/apply", bundle(ping("p1", nil), ping("p2", nil))); status != 422 || !contains(codes(body, "monitors.1"), "plan_limit_reached") {
		t.Fatalf("plan limit: %d %v", status, body)
	}
	if a.srv.Store.AppliedIndex() != applied+1 { // the refused entry itself, which changed nothing
		t.Fatalf("applied moved by %d", a.srv.Store.AppliedIndex()-applied)
	}
	if status, body, _ := a.do("GET", "/api/v1/monitors?kind=ping", nil); status != 200 || len(body["monitors"].([]any)) != 0 {
		t.Fatalf("a refused apply created monitors: %v", body)
	}
	// Config as code off: 403, export still works.
	a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_SetPlan{SetPlan: &raftv1.SetPlan{
		AccountId: a.acct.ID, Plan: &raftv1.Plan{Name: "manual", ConfigAsCode: false, IngestRatePerSecond: 10, IngestBurst: 20},
	}}})
	if status, body, _ := a.do("POST", "/api/v1/monitors/apply", bundle()); status != 403 || body["code"] != "config_as_code_disabled" {
		t.Fatalf("config as code off: %d %v", status, body)
	}
	if status, _, _ := a.do("GET", "/api/v1/monitors/export", nil); status != 200 {
		t.Fatalf("export with config as code off: %d", status)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
