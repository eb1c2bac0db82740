package manage_test

import (
	"testing"

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
