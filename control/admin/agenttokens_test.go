package admin_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

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

// TestCreateAgentTokenOfAccounts: a token names the accounts it serves
// (stored sorted, once each, and answered); without accounts it serves
// every account. An empty list, an unknown account or too many are
// refused, and nothing is stored.
func TestCreateAgentTokenOfAccounts(t *testing.T) {
	srv := controltest.NewServer(t)
	a := mustCreateAccount(t, srv, "a@example.com")
	b := mustCreateAccount(t, srv, "b@example.com")
	r := do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"eu-1","name":"tenant agents","accounts":["`+b.ID+`","`+a.ID+`","`+b.ID+`"]}`)
	r.wantStatus(t, http.StatusCreated)
	var got struct {
		ID, Token string
		Accounts  []string
	}
	r.decode(t, &got)
	want := []string{a.ID, b.ID}
	slices.Sort(want)
	if !slices.Equal(got.Accounts, want) {
		t.Fatalf("answered accounts %v, want %v", got.Accounts, want)
	}
	stored, err := srv.Store.AgentTokenByHash(apikey.Hash(got.Token))
	if err != nil || !slices.Equal(stored.GetAccounts(), want) {
		t.Fatalf("stored %v %v", stored, err)
	}

	r = do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"eu-1","name":"own agents","accounts":null}`)
	r.wantStatus(t, http.StatusCreated)
	var all struct {
		Token    string
		Accounts []string
	}
	r.decode(t, &all)
	if stored, err := srv.Store.AgentTokenByHash(apikey.Hash(all.Token)); err != nil || len(stored.GetAccounts()) != 0 || all.Accounts != nil {
		t.Fatalf("a token of every account: %v %v %v", stored, all.Accounts, err)
	}

	many := make([]string, state.MaxAgentTokenAccounts+1)
	for i := range many {
		many[i] = `"` + uuid.NewString() + `"`
	}
	for name, accounts := range map[string]string{
		"empty":           `[]`,
		"unknown account": `["` + a.ID + `","` + uuid.NewString() + `"]`,
		"empty id":        `[""]`,
		"too many":        `[` + strings.Join(many, ",") + `]`,
		"not a list":      `"` + a.ID + `"`,
	} {
		t.Run(name, func(t *testing.T) {
			do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"eu-1","name":"x","accounts":`+accounts+`}`).
				wantError(t, http.StatusBadRequest, "invalid_request", "invalid field: accounts")
		})
	}
}

// TestRotateAgentToken: a rotation makes a new token of the same region,
// name and accounts that starts where the old one started (so buffered
// events still go through), and leaves the old one valid; a rotation of
// the rotated token keeps that start. An unknown or revoked token is 404.
func TestRotateAgentToken(t *testing.T) {
	srv := controltest.NewServer(t)
	a := mustCreateAccount(t, srv, "a@example.com")
	r := do(t, srv, "POST", "/admin/v1/agent-tokens", `{"region":"eu-1","name":"tenant agents","accounts":["`+a.ID+`"]}`)
	r.wantStatus(t, http.StatusCreated)
	var first struct{ ID, Token string }
	r.decode(t, &first)
	old, err := srv.Store.AgentTokenByHash(apikey.Hash(first.Token))
	if err != nil {
		t.Fatal(err)
	}

	var prev = first.ID
	for round := range 2 {
		r = do(t, srv, "POST", "/admin/v1/agent-tokens/"+prev+"/rotate", "")
		r.wantStatus(t, http.StatusCreated)
		var got struct {
			ID, Region, Name, Replaces, Token string
			Accounts                          []string
		}
		r.decode(t, &got)
		if got.ID == prev || got.Region != "eu-1" || got.Name != "tenant agents" || got.Replaces != prev ||
			!slices.Equal(got.Accounts, []string{a.ID}) || !strings.HasPrefix(got.Token, apikey.Agent) || got.Token == first.Token {
			t.Fatalf("rotation %d answered %+v", round, got)
		}
		stored, err := srv.Store.AgentTokenByHash(apikey.Hash(got.Token))
		if err != nil {
			t.Fatal(err)
		}
		if stored.GetId() != got.ID || stored.GetReplaces() != prev || state.AgentTokenValidFrom(stored) != old.GetCreatedUnixMs() ||
			!slices.Equal(stored.GetAccounts(), []string{a.ID}) {
			t.Fatalf("rotation %d stored %v; the first token was made at %d", round, stored, old.GetCreatedUnixMs())
		}
		prev = got.ID
	}
	if _, err := srv.Store.AgentTokenByHash(apikey.Hash(first.Token)); err != nil {
		t.Fatalf("the rotated token was revoked: %v", err)
	}
	// The list shows the chain, never a secret.
	r = do(t, srv, "GET", "/admin/v1/agent-tokens", "")
	r.wantStatus(t, http.StatusOK)
	var raw struct{ Tokens []map[string]any }
	r.decode(t, &raw)
	replaces := map[string]string{}
	for _, tok := range raw.Tokens {
		if _, ok := tok["token"]; ok || tok["region"] != "eu-1" || tok["valid_from"] != tok["created_at"] || len(tok["accounts"].([]any)) != 1 {
			t.Fatalf("listed %v", tok)
		}
		rep, _ := tok["replaces"].(string)
		replaces[tok["id"].(string)] = rep
	}
	if len(raw.Tokens) != 3 || replaces[first.ID] != "" || replaces[prev] == "" || replaces[replaces[prev]] != first.ID {
		t.Fatalf("listed chain %v, the last %s", replaces, prev)
	}

	do(t, srv, "DELETE", "/admin/v1/agent-tokens/"+first.ID, "").wantStatus(t, http.StatusNoContent)
	do(t, srv, "POST", "/admin/v1/agent-tokens/"+first.ID+"/rotate", "").wantError(t, http.StatusNotFound, "not_found", "")
	do(t, srv, "POST", "/admin/v1/agent-tokens/"+uuid.NewString()+"/rotate", "").wantError(t, http.StatusNotFound, "not_found", "")
}
