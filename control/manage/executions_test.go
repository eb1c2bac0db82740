package manage_test

import (
	"context"
	"testing"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestExecutionsAndCheckStatus(t *testing.T) {
	a := newAPI(t)
	status, m, _ := a.do("POST", "/api/v1/monitors", httpCheck("site", "https://example.com/"))
	if status != 201 {
		t.Fatalf("create: %d %v", status, m)
	}
	id := m["uuid"].(string)
	_, got, _ := a.do("GET", "/api/v1/monitors/"+id, nil)
	st, _ := got["status"].(map[string]any)
	if st["state"] != "pending" || st["last_execution_at"] != nil || st["last_status"] != nil || st["next_run_at"] == nil {
		t.Fatalf("status before any execution: %v", got["status"])
	}
	if _, body, _ := a.do("GET", "/api/v1/monitors/"+id+"/executions", nil); len(body["executions"].([]any)) != 0 {
		t.Fatalf("executions before any: %v", body)
	}
	slot := a.srv.Now.UnixMilli()
	record := func(e *raftv1.Execution) {
		e.AccountId, e.CheckUuid, e.Region, e.SlotUnixMs, e.StartedUnixMs = a.acct.ID, id, state.RegionControl, slot, slot
		res, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{e}}}})
		if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("record: %v %v", res, err)
		}
	}
	record(&raftv1.Execution{Status: state.ExecRunning, Attempts: 1})
	_, got, _ = a.do("GET", "/api/v1/monitors/"+id, nil)
	if st := got["status"].(map[string]any); st["state"] != "pending" || st["last_status"] != "running" {
		t.Fatalf("status while running: %v", st)
	}
	record(&raftv1.Execution{Status: state.ExecFailed, Attempts: 4, FinishedUnixMs: slot + 7500, DurationMs: 12, Error: "the answer's status is 500, want 200",
		Http: &raftv1.ExecutionHTTP{StatusCode: 500, ResponseBytes: 3, ConnectMs: 1, TtfbMs: 10, TotalMs: 12}})
	_, got, _ = a.do("GET", "/api/v1/monitors/"+id, nil)
	if st := got["status"].(map[string]any); st["state"] != "down" || st["last_status"] != "failed" || st["last_execution_at"] == nil {
		t.Fatalf("status after a failure: %v", st)
	}
	status, body, _ := a.do("GET", "/api/v1/monitors/"+id+"/executions?limit=1", nil)
	list, _ := body["executions"].([]any)
	if status != 200 || len(list) != 1 {
		t.Fatalf("executions: %d %v", status, body)
	}
	e := list[0].(map[string]any)
	h, _ := e["http"].(map[string]any)
	timings, _ := h["timings_ms"].(map[string]any)
	if e["id"] != state.ExecutionID(id, "control", slot) || e["region"] != "control" || e["status"] != "failed" || e["attempts"] != 4.0 ||
		e["error"] == nil || e["finished_at"] == nil || h["status_code"] != 500.0 || timings["total"] != 12.0 || e["ssl"] != nil {
		t.Fatalf("execution %v", e)
	}
	if status, _, _ := a.do("GET", "/api/v1/monitors/"+id+"/executions?limit=0", nil); status != 400 {
		t.Fatalf("limit=0: %d", status)
	}
	// Disabled: paused, no next run.
	c := httpCheck("site", "https://example.com/")
	c["enabled"] = false
	if status, _, _ := a.do("PUT", "/api/v1/monitors/"+id, c); status != 200 {
		t.Fatalf("disable: %d", status)
	}
	_, got, _ = a.do("GET", "/api/v1/monitors/"+id, nil)
	if st := got["status"].(map[string]any); st["state"] != "paused" || st["next_run_at"] != nil {
		t.Fatalf("status when disabled: %v", st)
	}
}

// TestExecutionsNameTheAgentID: two agents of a region with the same
// --name are told apart by the agent_id of their executions.
func TestExecutionsNameTheAgentID(t *testing.T) {
	a := newAPI(t)
	c := httpCheck("site", "https://example.com/")
	c["regions"] = []string{"eu-1"}
	status, m, _ := a.do("POST", "/api/v1/monitors", c)
	if status != 201 {
		t.Fatalf("create: %d %v", status, m)
	}
	id := m["uuid"].(string)
	slot := a.srv.Now.UnixMilli()
	for i, agentID := range []string{"ag_one", "ag_two"} {
		s := slot - int64(i)*60_000
		res, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
			AccountId: a.acct.ID, CheckUuid: id, Region: "eu-1", Agent: "edge", AgentId: agentID, SlotUnixMs: s, StartedUnixMs: s, FinishedUnixMs: s + 10,
			Status: state.ExecSuccess, Attempts: 1}}}}})
		if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("record: %v %v", res, err)
		}
	}
	_, body, _ := a.do("GET", "/api/v1/monitors/"+id+"/executions", nil)
	list, _ := body["executions"].([]any)
	if len(list) != 2 {
		t.Fatalf("executions %v", body)
	}
	for i, want := range []string{"ag_one", "ag_two"} {
		e := list[i].(map[string]any)
		if e["agent"] != "edge" || e["agent_id"] != want {
			t.Fatalf("execution %d: agent %v agent_id %v, want edge %s", i, e["agent"], e["agent_id"], want)
		}
	}
}
