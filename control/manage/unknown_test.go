package manage_test

import (
	"context"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestUnknownWhileRegionOffline: a check whose regions are all offline,
// and a ping monitor whose newest ping came through an offline region,
// show state unknown; a check with a region still online, and monitors
// without a region, do not.
func TestUnknownWhileRegionOffline(t *testing.T) {
	a := newAPI(t)
	apply := func(cmd *raftv1.Command) {
		t.Helper()
		if res, err := a.srv.Cluster.Apply(context.Background(), cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("apply: %v %v", res, err)
		}
	}
	create := func(body map[string]any) string {
		t.Helper()
		status, m, _ := a.do("POST", "/api/v1/monitors", body)
		if status != 201 {
			t.Fatalf("create: %d %v", status, m)
		}
		return m["uuid"].(string)
	}
	euOnly := httpCheck("eu-only", "https://example.com/")
	euOnly["regions"] = []string{"eu"}
	both := httpCheck("both", "https://example.com/")
	both["regions"] = []string{"eu", "us"}
	local := httpCheck("local", "https://example.com/")
	ids := map[string]string{"eu-only": create(euOnly), "both": create(both), "local": create(local)}
	ts := a.srv.Now.Unix()
	apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{
		{AccountId: a.acct.ID, Monitor: "via-eu", EventType: "ping", Status: "complete", Timestamp: &ts, Region: "eu", ReceivedUnixMs: a.srv.Now.UnixMilli()},
		{AccountId: a.acct.ID, Monitor: "direct", EventType: "ping", Status: "complete", Timestamp: &ts, ReceivedUnixMs: a.srv.Now.UnixMilli()},
	}}}})
	status, list, _ := a.do("GET", "/api/v1/monitors", nil)
	if status != 200 {
		t.Fatalf("list: %d", status)
	}
	for _, m := range list["monitors"].([]any) {
		m := m.(map[string]any)
		if m["type"] == "ping" || m["kind"] == "ping" {
			ids[m["name"].(string)] = m["uuid"].(string)
		}
	}
	states := func() map[string]string {
		out := map[string]string{}
		for name, id := range ids {
			_, got, _ := a.do("GET", "/api/v1/monitors/"+id, nil)
			st, _ := got["status"].(map[string]any)
			out[name], _ = st["state"].(string)
		}
		return out
	}
	before := states()
	if len(before) != 5 || before["via-eu"] != "up" || before["eu-only"] != "pending" {
		t.Fatalf("states before %v (ids %v)", before, ids)
	}
	apply(&raftv1.Command{Op: &raftv1.Command_SetRegionState{SetRegionState: &raftv1.SetRegionState{Region: "eu", Offline: true, SinceUnixMs: 1, Done: true}}})
	want := map[string]string{"eu-only": "unknown", "both": "pending", "local": "pending", "via-eu": "unknown", "direct": "up"}
	if got := states(); len(got) != len(want) {
		t.Fatalf("states %v", got)
	} else {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %q, want %q", k, got[k], v)
			}
		}
	}
	apply(&raftv1.Command{Op: &raftv1.Command_SetRegionState{SetRegionState: &raftv1.SetRegionState{Region: "eu", Offline: false, SinceUnixMs: 2, Done: true}}})
	if got := states(); got["eu-only"] != "pending" || got["via-eu"] != "up" {
		t.Fatalf("states after eu is back %v", got)
	}
}
