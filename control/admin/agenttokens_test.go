package admin_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
	"lookout/control/state"
	"lookout/internal/apikey"
)

func TestCreateAgentToken(t *testing.T) {
	srv := controltest.NewServer(t)
	r := do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"eu-west-1","name":"frankfurt agents"}`)
	r.wantStatus(t, http.StatusCreated)
	var got struct{ ID, Region, Name, Token string }
	r.decode(t, &got)
	if got.Region != "eu-west-1" || got.Name != "frankfurt agents" || !strings.HasPrefix(got.Token, apikey.Agent) || got.ID == "" {
		t.Errorf("got %+v", got)
	}
	stored, err := srv.Store.AgentTokenByHash(apikey.Hash(got.Token))
	if err != nil {
		t.Fatal(err)
	}
	if stored.GetId() != got.ID || stored.GetRegion() != "eu-west-1" || stored.GetName() != "frankfurt agents" {
		t.Errorf("stored %v", stored)
	}
}

func TestCreateAgentTokenInvalid(t *testing.T) {
	srv := controltest.NewServer(t)
	tests := []struct{ name, body, msg string }{
		{"no region", `{"name":"a"}`, "invalid field: region"},
		{"upper case", `{"region":"EU","name":"a"}`, "invalid field: region"},
		{"underscore", `{"region":"eu_west","name":"a"}`, "invalid field: region"},
		{"long region", `{"region":"` + strings.Repeat("r", 65) + `","name":"a"}`, "invalid field: region"},
		{"no name", `{"region":"eu"}`, "invalid field: name"},
		{"long name", `{"region":"eu","name":"` + strings.Repeat("n", 101) + `"}`, "invalid field: name"},
		{"unknown field", `{"region":"eu","name":"a","ttl":5}`, "invalid field: ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do(t, srv, "POST", "/admin/v1/agent-tokens", tt.body).wantError(t, http.StatusBadRequest, "invalid_request", tt.msg)
		})
	}
	do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"`+strings.Repeat("r", 64)+`","name":"a"}`).wantStatus(t, http.StatusCreated)
}

func TestRevokeAgentToken(t *testing.T) {
	srv := controltest.NewServer(t)
	r := do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"eu-1","name":"a"}`)
	r.wantStatus(t, http.StatusCreated)
	var got struct{ ID, Token string }
	r.decode(t, &got)
	keep := do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"eu-1","name":"b"}`)
	var other struct{ ID, Token string }
	keep.decode(t, &other)

	do(t, srv, "DELETE", "/admin/v1/agent-tokens/"+got.ID, "").wantStatus(t, http.StatusNoContent)
	if _, err := srv.Store.AgentTokenByHash(apikey.Hash(got.Token)); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("revoked token still stored: %v", err)
	}
	if _, err := srv.Store.AgentTokenByHash(apikey.Hash(other.Token)); err != nil {
		t.Fatalf("the other token: %v", err)
	}
	do(t, srv, "DELETE", "/admin/v1/agent-tokens/"+got.ID, "").wantError(t, http.StatusNotFound, "not_found", "")
	do(t, srv, "DELETE", "/admin/v1/agent-tokens/no-such-id", "").wantError(t, http.StatusNotFound, "not_found", "")
}
