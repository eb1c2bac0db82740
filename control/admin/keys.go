package admin

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// maxKeyName bounds a key's name, in characters.
const maxKeyName = 100

// The key types and scopes as the API spells them.
const (
	keyTypeIngest     = "ingest"
	keyTypeManagement = "management"
	scopeRead         = "read"
	scopeWrite        = "write"
	scopeDelete       = "delete"
)

// allScopes is what a management key made without scopes gets.
func allScopes() []string { return []string{scopeRead, scopeWrite, scopeDelete} }

// keyBody is the JSON of POST /admin/v1/accounts/{id}/keys. Scopes is nil
// when absent or null, and empty (not nil) for [].
type keyBody struct {
	Type   string   `json:"type"`
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
}

// KeyCreated is the answer: the secret is shown only here.
type KeyCreated struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Scopes []string `json:"scopes"`
	Key    string   `json:"key"`
}

// handleCreateKey serves POST /admin/v1/accounts/{id}/keys.
func (a *API) handleCreateKey(w http.ResponseWriter, r *http.Request) {
	var body keyBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	created, err := a.createKey(r.Context(), r.PathValue("id"), body)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

func (a *API) createKey(ctx context.Context, accountID string, body keyBody) (*KeyCreated, error) {
	var typ raftv1.KeyType
	switch body.Type {
	case keyTypeIngest:
		typ = raftv1.KeyType_KEY_TYPE_INGEST
		if len(body.Scopes) > 0 {
			return nil, invalidField("scopes", "only management keys have scopes")
		}
	case keyTypeManagement:
		typ = raftv1.KeyType_KEY_TYPE_MANAGEMENT
	case "":
		return nil, invalidField("type", "required: ingest or management")
	default:
		return nil, invalidField("type", "must be ingest or management")
	}
	if err := checkName("name", body.Name, maxKeyName); err != nil {
		return nil, err
	}
	scopes := []string{}
	if typ == raftv1.KeyType_KEY_TYPE_MANAGEMENT {
		var err error
		if scopes, err = checkScopes(body.Scopes); err != nil {
			return nil, err
		}
	}
	key, secret, err := newKey(accountID, typ, body.Name, scopes)
	if err != nil {
		return nil, err
	}
	err = a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{Key: key}}})
	if err != nil {
		return nil, err
	}
	return &KeyCreated{ID: key.Id, Name: key.Name, Type: body.Type, Scopes: scopes, Key: secret}, nil
}

// checkScopes validates the scopes of a management key and returns them in
// the order read, write, delete. Absent (nil) means all three; an empty
// list is refused, since such a key could do nothing.
func checkScopes(scopes []string) ([]string, error) {
	if scopes == nil {
		return allScopes(), nil
	}
	if len(scopes) == 0 {
		return nil, invalidField("scopes", "must name at least one of read, write, delete (or be left out for all three)")
	}
	seen := make(map[string]bool, len(scopes))
	for i, s := range scopes {
		field := fmt.Sprintf("scopes[%d]", i)
		switch {
		case s != scopeRead && s != scopeWrite && s != scopeDelete:
			return nil, invalidField(field, "must be read, write or delete")
		case seen[s]:
			return nil, invalidField(field, "duplicate scope "+s)
		}
		seen[s] = true
	}
	var out []string
	for _, s := range allScopes() {
		if seen[s] {
			out = append(out, s)
		}
	}
	return out, nil
}

// newKey makes a key of accountID with a fresh id and secret, and returns
// it (holding only the secret's hash) with the secret.
func newKey(accountID string, typ raftv1.KeyType, name string, scopes []string) (*raftv1.Key, string, error) {
	prefix := apikey.Ingest
	if typ == raftv1.KeyType_KEY_TYPE_MANAGEMENT {
		prefix = apikey.Management
	}
	secret, hash, err := apikey.New(prefix)
	if err != nil {
		return nil, "", fmt.Errorf("make %s key: %w", typ, err)
	}
	return &raftv1.Key{
		Id:        uuid.NewString(),
		AccountId: accountID,
		Type:      typ,
		Name:      name,
		Scopes:    scopes,
		Hash:      hash,
	}, secret, nil
}

// handleRevokeKey serves DELETE /admin/v1/accounts/{id}/keys/{key_id}. The
// key stops working on every node as soon as the command is applied; a key
// of another account is not found.
func (a *API) handleRevokeKey(w http.ResponseWriter, r *http.Request) {
	err := a.apply(r.Context(), &raftv1.Command{Op: &raftv1.Command_RevokeKey{RevokeKey: &raftv1.RevokeKey{
		AccountId: r.PathValue("id"),
		KeyId:     r.PathValue("key_id"),
	}}})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
