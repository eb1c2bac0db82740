package cli

import (
	"errors"
	"net/http"
	"testing"

	"lookout/control/controltest"
	"lookout/internal/client"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestAdminAgentForget: lookout admin agent forget ID removes the agent's
// record and prints nothing; an unknown id is a 404 APIError.
func TestAdminAgentForget(t *testing.T) {
	srv := controltest.NewServer(t)
	srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_RecordAgentSeen{RecordAgentSeen: &raftv1.RecordAgentSeen{
		AgentId: "ag_retired", Region: "eu-1",
	}}})
	var list client.AgentList
	mustRunAdmin(t, srv, &list, "agent", "list")
	if len(list.Agents) != 1 {
		t.Fatalf("agents %+v", list)
	}
	if stdout, err := runAdminTest(t, adminEnv(srv), "agent", "forget", "ag_retired"); err != nil || stdout != "" {
		t.Fatalf("forget: %q, %v", stdout, err)
	}
	mustRunAdmin(t, srv, &list, "agent", "list")
	if len(list.Agents) != 0 {
		t.Fatalf("agents after forget %+v", list)
	}
	var apiErr *client.APIError
	if _, err := runAdminTest(t, adminEnv(srv), "agent", "forget", "ag_retired"); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("forget again: %v, want a 404 APIError", err)
	}
}
