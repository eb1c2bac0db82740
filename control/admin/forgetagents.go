package admin

import (
	"net/http"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// maxAgentID bounds the id of DELETE /admin/v1/agents/{id}. Any id up to
// it is looked up, so that a record of a malformed id (one an older
// control node recorded) can be forgotten too.
const maxAgentID = 1024

// handleForgetAgent serves DELETE /admin/v1/agents/{id}: 204, or 404 for
// an unknown id. The agent's record goes; a region left without agents is
// no longer judged (the leader forgets it within a second). An agent that
// still runs is recorded again at its next heartbeat: stop it first.
func (a *API) handleForgetAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "" || len(id) > maxAgentID {
		a.fail(w, r, &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "agent not found"})
		return
	}
	err := a.apply(r.Context(), &raftv1.Command{Op: &raftv1.Command_ForgetAgents{ForgetAgents: &raftv1.ForgetAgents{
		AgentIds: []string{id},
	}}})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
