package manage_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestDependsOnValidation: depends_on must name monitors of the account
// (or of the same bundle) and make no cycle; apply's diff shows it; a
// dependent of a check that is down shows held_by.
func TestDependsOnValidation(t *testing.T) {
	a := newAPI(t)
	dep := func(kind, name string) []any { return []any{map[string]any{"kind": kind, "name": name}} }
	code, db, _ := a.do("POST", "/api/v1/monitors", httpCheck("db", "https://example.com/"))
	if code != http.StatusCreated {
		t.Fatalf("create db: %d %v", code, db)
	}
	if code, body, _ := a.do("POST", "/api/v1/monitors", ping("app", map[string]any{"depends_on": dep("http_check", "nope")})); code != 422 || !slices.Equal(codes(body, "manifest"), []string{"dependency_invalid"}) {
		t.Fatalf("unknown dependency: %d %v", code, body)
	}
	if code, body, _ := a.do("POST", "/api/v1/monitors", ping("app", map[string]any{"depends_on": dep("ping", "app")})); code != 422 || !slices.Equal(codes(body, "manifest"), []string{"dependency_cycle"}) {
		t.Fatalf("itself: %d %v", code, body)
	}
	code, app, _ := a.do("POST", "/api/v1/monitors", ping("app", map[string]any{"depends_on": dep("http_check", "db")}))
	if code != http.StatusCreated || app["depends_on"] == nil {
		t.Fatalf("create app: %d %v", code, app)
	}
	// db depending on app makes a cycle.
	withDep := httpCheck("db", "https://example.com/")
	withDep["depends_on"] = dep("ping", "app")
	if code, body, _ := a.do("PUT", "/api/v1/monitors/"+db["uuid"].(string), withDep); code != 422 || !slices.Equal(codes(body, "manifest"), []string{"dependency_cycle"}) {
		t.Fatalf("cycle: %d %v", code, body)
	}
	// A bundle: a dependency within it is fine; a cycle within it is
	// reported at each entry of it; the diff shows depends_on.
	code, rep, _ := a.do("POST", "/api/v1/monitors/apply?dry_run=true", bundle(
		ping("app", map[string]any{"depends_on": dep("ping", "queue")}), ping("queue", nil), httpCheck("db", "https://example.com/")))
	if ch, _ := rep["changes"].([]any); code != http.StatusOK || len(ch) != 2 || toJSON(ch[0].(map[string]any)["diff"]) != `{"depends_on":[[{"kind":"http_check","name":"db"}],[{"kind":"ping","name":"queue"}]]}` {
		t.Fatalf("changes %s", toJSON(rep["changes"]))
	}
	code, rep, _ = a.do("POST", "/api/v1/monitors/apply", bundle(
		ping("app", map[string]any{"depends_on": dep("ping", "queue")}), ping("queue", map[string]any{"depends_on": dep("ping", "app")})))
	if code != 422 || !slices.Equal(codes(rep, "monitors.0"), []string{"dependency_cycle"}) || !slices.Equal(codes(rep, "monitors.1"), []string{"dependency_cycle"}) {
		t.Fatalf("apply a cycle: %d %v", code, rep)
	}

	// db fails: app shows held_by db.
	slot := a.srv.Now.UnixMilli()
	if res, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
		AccountId: a.acct.ID, CheckUuid: db["uuid"].(string), Region: "control", SlotUnixMs: slot, Status: "failed", Attempts: 1, FinishedUnixMs: slot}}}}}); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("record: %v %v", res, err)
	}
	_, got, _ := a.do("GET", "/api/v1/monitors/"+app["uuid"].(string), nil)
	if h, _ := got["status"].(map[string]any)["held_by"].(map[string]any); h["uuid"] != db["uuid"] || h["kind"] != "http_check" || h["name"] != "db" {
		t.Fatalf("status %v", got["status"])
	}
}
