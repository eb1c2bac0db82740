package admin_test

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"lookout/control/controltest"
	"lookout/control/state"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// createdKey is the answer to POST .../keys.
type createdKey struct {
	ID, Name, Type, Key string
	Scopes              []string
}

func TestCreateKey(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/keys"
	tests := []struct {
		name, body, prefix string
		typ                raftv1.KeyType
		scopes             []string
	}{
		{"ingest", `{"type":"ingest","name":"ci"}`, apikey.Ingest, raftv1.KeyType_KEY_TYPE_INGEST, []string{}},
		{"ingest empty scopes", `{"type":"ingest","name":"ci2","scopes":[]}`, apikey.Ingest, raftv1.KeyType_KEY_TYPE_INGEST, []string{}},
		{"management all", `{"type":"management","name":"deploy"}`, apikey.Management, raftv1.KeyType_KEY_TYPE_MANAGEMENT, []string{"read", "write", "delete"}},
		{"management null scopes", `{"type":"management","name":"deploy2","scopes":null}`, apikey.Management, raftv1.KeyType_KEY_TYPE_MANAGEMENT, []string{"read", "write", "delete"}},
		{"management read", `{"type":"management","name":"grafana","scopes":["read"]}`, apikey.Management, raftv1.KeyType_KEY_TYPE_MANAGEMENT, []string{"read"}},
		{"management reordered", `{"type":"management","name":"ci","scopes":["delete","read"]}`, apikey.Management, raftv1.KeyType_KEY_TYPE_MANAGEMENT, []string{"read", "delete"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "POST", path, tt.body)
			r.wantStatus(t, http.StatusCreated)
			var got createdKey
			r.decode(t, &got)
			if !strings.HasPrefix(got.Key, tt.prefix) || !reflect.DeepEqual(got.Scopes, tt.scopes) || got.ID == "" {
				t.Errorf("got %+v, want prefix %s and scopes %v", got, tt.prefix, tt.scopes)
			}
			stored, err := srv.Store.KeyByHash(apikey.Hash(got.Key))
			if err != nil {
				t.Fatal(err)
			}
			if stored.GetId() != got.ID || stored.GetAccountId() != acct.ID || stored.GetType() != tt.typ ||
				stored.GetName() != got.Name || len(stored.GetScopes()) != len(tt.scopes) {
				t.Errorf("stored %v", stored)
			}
		})
	}
}

func TestCreateKeyInvalid(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/keys"
	tests := []struct{ name, body, msg string }{
		{"no type", `{"name":"x"}`, "invalid field: type"},
		{"bad type", `{"type":"admin","name":"x"}`, "invalid field: type"},
		{"no name", `{"type":"ingest"}`, "invalid field: name"},
		{"blank name", `{"type":"ingest","name":" "}`, "invalid field: name"},
		{"long name", `{"type":"ingest","name":"` + strings.Repeat("é", 101) + `"}`, "invalid field: name"},
		{"ingest with scopes", `{"type":"ingest","name":"x","scopes":["read"]}`, "invalid field: scopes"},
		{"empty scopes", `{"type":"management","name":"x","scopes":[]}`, "invalid field: scopes"},
		{"unknown scope", `{"type":"management","name":"x","scopes":["read","admin"]}`, "invalid field: scopes[1]"},
		{"duplicate scope", `{"type":"management","name":"x","scopes":["read","read"]}`, "invalid field: scopes[1]"},
		{"scopes not array", `{"type":"management","name":"x","scopes":"read"}`, "invalid field: scopes"},
		{"unknown field", `{"type":"ingest","name":"x","expires":1}`, "invalid field: expires"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do(t, srv, "POST", path, tt.body).wantError(t, http.StatusBadRequest, "invalid_request", tt.msg)
		})
	}
	// A name of exactly 100 characters is fine.
	do(t, srv, "POST", path, `{"type":"ingest","name":"`+strings.Repeat("é", 100)+`"}`).wantStatus(t, http.StatusCreated)
	keys, err := srv.Store.Keys(acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 {
		t.Errorf("account has %d keys, want its 2 personal ones and 1 new", len(keys))
	}
}

func TestCreateKeyUnknownAccount(t *testing.T) {
	srv := controltest.NewServer(t)
	do(t, srv, "POST", "/admin/v1/accounts/nope/keys", `{"type":"ingest","name":"x"}`).
		wantError(t, http.StatusNotFound, "not_found", "account nope not found")
}

func TestRevokeKey(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	other := mustCreateAccount(t, srv, "other@example.com")
	r := do(t, srv, "POST", "/admin/v1/accounts/"+acct.ID+"/keys", `{"type":"management","name":"ci"}`)
	r.wantStatus(t, http.StatusCreated)
	var key createdKey
	r.decode(t, &key)

	// Another account's id does not reach the key.
	do(t, srv, "DELETE", "/admin/v1/accounts/"+other.ID+"/keys/"+key.ID, "").
		wantError(t, http.StatusNotFound, "not_found", "key ")
	if _, err := srv.Store.KeyByHash(apikey.Hash(key.Key)); err != nil {
		t.Fatalf("key gone after another account's revoke: %v", err)
	}

	r = do(t, srv, "DELETE", "/admin/v1/accounts/"+acct.ID+"/keys/"+key.ID, "")
	r.wantStatus(t, http.StatusNoContent)
	if len(r.body) != 0 {
		t.Errorf("204 with body %s", r.body)
	}
	if _, err := srv.Store.KeyByHash(apikey.Hash(key.Key)); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("revoked key still found: %v", err)
	}
	// The personal keys are untouched.
	if _, err := srv.Store.KeyByHash(apikey.Hash(acct.ManagementKey)); err != nil {
		t.Errorf("personal key: %v", err)
	}
	do(t, srv, "DELETE", "/admin/v1/accounts/"+acct.ID+"/keys/"+key.ID, "").
		wantError(t, http.StatusNotFound, "not_found", "key ")
}
