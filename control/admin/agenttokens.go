package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"lookout/control/state"
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
	// Accounts, when given, are the only accounts the token's agents
	// serve; absent or null: every account.
	Accounts *[]string `json:"accounts"`
}

// agentTokenCreated is the answer: the token is shown only here.
type agentTokenCreated struct {
	ID       string   `json:"id"`
	Region   string   `json:"region"`
	Name     string   `json:"name"`
	Accounts []string `json:"accounts,omitempty"`
	// Replaces is the token a rotation made this one for.
	Replaces string `json:"replaces,omitempty"`
	Token    string `json:"token"`
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
	accounts, err := a.tokenAccounts(ctx, body.Accounts)
	if err != nil {
		return nil, err
	}
	return a.applyAgentToken(ctx, &raftv1.CreateAgentToken{Region: body.Region, Name: body.Name, Accounts: accounts})
}

// applyAgentToken makes the secret and id of the token c describes and
// applies its creation.
func (a *API) applyAgentToken(ctx context.Context, c *raftv1.CreateAgentToken) (*agentTokenCreated, error) {
	token, hash, err := apikey.New(apikey.Agent)
	if err != nil {
		return nil, fmt.Errorf("make agent token: %w", err)
	}
	c.Id, c.Hash = uuid.NewString(), hash
	if err := a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: c}}); err != nil {
		return nil, err
	}
	return &agentTokenCreated{ID: c.GetId(), Region: c.GetRegion(), Name: c.GetName(), Accounts: c.GetAccounts(), Replaces: c.GetReplaces(), Token: token}, nil
}

// agentTokenJSON is one token in GET /admin/v1/agent-tokens: never its
// secret.
type agentTokenJSON struct {
	ID       string   `json:"id"`
	Region   string   `json:"region"`
	Name     string   `json:"name"`
	Accounts []string `json:"accounts,omitempty"`
	// CreatedAt is when it was made; ValidFrom the earliest receipt time
	// of an event its agents may forward (that of the first token of its
	// rotations).
	CreatedAt string `json:"created_at"`
	ValidFrom string `json:"valid_from"`
	Replaces  string `json:"replaces,omitempty"`
}

// handleListAgentTokens serves GET /admin/v1/agent-tokens: the live
// tokens after a consistent read, by region, then name.
func (a *API) handleListAgentTokens(w http.ResponseWriter, r *http.Request) {
	if err := a.cluster.ConsistentRead(r.Context()); err != nil {
		a.fail(w, r, fmt.Errorf("consistent read: %w", err))
		return
	}
	tokens, err := a.state.AgentTokens()
	if err != nil {
		a.fail(w, r, fmt.Errorf("agent tokens: %w", err))
		return
	}
	out := struct {
		Tokens []agentTokenJSON `json:"tokens"`
	}{Tokens: make([]agentTokenJSON, 0, len(tokens))}
	for _, t := range tokens {
		out.Tokens = append(out.Tokens, agentTokenJSON{
			ID: t.GetId(), Region: t.GetRegion(), Name: t.GetName(), Accounts: t.GetAccounts(), Replaces: t.GetReplaces(),
			CreatedAt: rfc3339(t.GetCreatedUnixMs()), ValidFrom: rfc3339(state.AgentTokenValidFrom(t)),
		})
	}
	writeJSON(w, http.StatusOK, out)
}

// handleRotateAgentToken serves POST /admin/v1/agent-tokens/{id}/rotate:
// a new token of the same region, name and accounts, whose agents may
// forward everything the old token's could (what they buffered before the
// rotation included). The old token stays valid until it is revoked.
func (a *API) handleRotateAgentToken(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := a.cluster.ConsistentRead(ctx); err != nil {
		a.fail(w, r, fmt.Errorf("consistent read: %w", err))
		return
	}
	old, err := a.state.AgentToken(r.PathValue("id"))
	if errors.Is(err, state.ErrNotFound) {
		err = &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: fmt.Sprintf("agent token %s not found", r.PathValue("id"))}
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	created, err := a.applyAgentToken(ctx, &raftv1.CreateAgentToken{Region: old.GetRegion(), Name: old.GetName(), Accounts: old.GetAccounts(), Replaces: old.GetId()})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

// tokenAccounts checks the accounts a token is to serve: absent, every
// account (nil); given, 1 to state.MaxAgentTokenAccounts ids of existing
// accounts (after a consistent read), returned sorted, once each.
func (a *API) tokenAccounts(ctx context.Context, given *[]string) ([]string, error) {
	if given == nil {
		return nil, nil
	}
	accounts := slices.Compact(slices.Sorted(slices.Values(*given)))
	switch {
	case len(accounts) == 0:
		return nil, invalidField("accounts", "at least one account id; leave it out for every account")
	case len(accounts) > state.MaxAgentTokenAccounts:
		return nil, invalidField("accounts", fmt.Sprintf("at most %d accounts", state.MaxAgentTokenAccounts))
	}
	if err := a.cluster.ConsistentRead(ctx); err != nil {
		return nil, fmt.Errorf("consistent read: %w", err)
	}
	for _, id := range accounts {
		_, err := a.state.Account(id)
		switch {
		case errors.Is(err, state.ErrNotFound) || id == "":
			return nil, invalidField("accounts", fmt.Sprintf("account %q not found", id))
		case err != nil:
			return nil, fmt.Errorf("read account %s: %w", id, err)
		}
	}
	return accounts, nil
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
