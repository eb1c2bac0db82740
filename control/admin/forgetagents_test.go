package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestForgetAgent: DELETE /admin/v1/agents/{id} removes the agent's record
// (204) and leaves the others; an unknown id is 404, as is one forgotten
// already.
func TestForgetAgent(t *testing.T) {
	srv := controltest.NewServer(t)
	for _, id := range []string{"ag_1", "ag_2"} {
		srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_RecordAgentSeen{RecordAgentSeen: &raftv1.RecordAgentSeen{
			AgentId: id, TokenId: "tok-" + id, Region: "eu-1", Connected: true,
		}}})
	}
	do(t, srv, "DELETE", "/admin/v1/agents/ag_1", "").wantStatus(t, http.StatusNoContent)
	agents, err := srv.Store.Agents()
	if err != nil || len(agents) != 1 || agents[0].GetId() != "ag_2" {
		t.Fatalf("agents %v %v", agents, err)
	}
	r := do(t, srv, "GET", "/admin/v1/agents", "")
	r.wantStatus(t, http.StatusOK)
	if strings.Contains(string(r.body), "ag_1") || !strings.Contains(string(r.body), `"token_id":"tok-ag_2"`) {
		t.Fatalf("GET /admin/v1/agents lists the forgotten agent, or not the token of the other: %s", r.body)
	}
	do(t, srv, "DELETE", "/admin/v1/agents/ag_1", "").wantError(t, http.StatusNotFound, "not_found", "")
	do(t, srv, "DELETE", "/admin/v1/agents/no-such-agent", "").wantError(t, http.StatusNotFound, "not_found", "")
	do(t, srv, "DELETE", "/admin/v1/agents/"+strings.Repeat("a", 2000), "").wantError(t, http.StatusNotFound, "not_found", "")
}
