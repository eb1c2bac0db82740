package admin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Agent token bounds.
const (
	maxRegion         = 64
	maxAgentTokenName = 100
)

// agentTokenBody is the JSON of POST /admin/v1/agent-tokens.
type agentTokenBody struct {
	Region string `json:"region"`
	Name   string `json:"name"`
}

// agentTokenCreated is the answer: the token is shown only here.
type agentTokenCreated struct {
	ID     string `json:"id"`
	Region string `json:"region"`
	Name   string `json:"name"`
	Token  string `json:"token"`
}

// handleCreateAgentToken serves POST /admin/v1/agent-tokens.
func (a *API) handleCreateAgentToken(w http.ResponseWriter, r *http.Request) {
	var body agentTokenBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	created, err := a.createAgentToken(r.Context(), body)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

func (a *API) createAgentToken(ctx context.Context, body agentTokenBody) (*agentTokenCreated, error) {
	if !validRegion(body.Region) {
		return nil, invalidField("region", "must be 1 to 64 characters of a-z, 0-9 and -")
	}
	if err := checkName("name", body.Name, maxAgentTokenName); err != nil {
		return nil, err
	}
	token, hash, err := apikey.New(apikey.Agent)
	if err != nil {
		return nil, fmt.Errorf("make agent token: %w", err)
	}
	id := uuid.NewString()
	err = a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: &raftv1.CreateAgentToken{
		Id:     id,
		Region: body.Region,
		Name:   body.Name,
		Hash:   hash,
	}}})
	if err != nil {
		return nil, err
	}
	return &agentTokenCreated{ID: id, Region: body.Region, Name: body.Name, Token: token}, nil
}

// handleRevokeAgentToken serves DELETE /admin/v1/agent-tokens/{id}: 204,
// or 404 for an unknown id. Every node refuses the token once the command
// is applied: unary calls at once, Assignments streams within a second.
func (a *API) handleRevokeAgentToken(w http.ResponseWriter, r *http.Request) {
	err := a.apply(r.Context(), &raftv1.Command{Op: &raftv1.Command_RevokeAgentToken{RevokeAgentToken: &raftv1.RevokeAgentToken{
		Id: r.PathValue("id"),
	}}})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// validRegion: 1 to 64 characters of a-z, 0-9 and '-'.
func validRegion(s string) bool {
	if len(s) == 0 || len(s) > maxRegion {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
