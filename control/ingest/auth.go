package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"lookout/control/keyauth"
	"lookout/control/state"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// caller is who sent a ping: the ingest key and its account.
type caller struct {
	key     *raftv1.Key
	account *statev1.Account
}

// errUnauthorized is a missing, malformed or invalid key.
var errUnauthorized = errors.New("unauthorized")

// secretOf returns the key a request carries (api.md section 5): the
// Authorization header when the request has one, else the api_key query
// parameter (on GET and POST). A header that is present but not
// "Bearer <token>" is refused: the query parameter is then never looked at.
func secretOf(r *http.Request) (string, error) {
	token, present, err := keyauth.BearerToken(r)
	if err != nil {
		return "", errUnauthorized
	}
	if present {
		return token, nil
	}
	if secret := r.URL.Query().Get("api_key"); secret != "" {
		return secret, nil
	}
	return "", errUnauthorized
}

// authenticate finds the ingest key of r and its account in the local
// state. A key this node does not hold is checked with the leader first
// (keyauth.Keys), so a node catching up does not refuse a new key; a
// revoked key stops working on this node as soon as it applies the
// revocation, and on every node from the revocation's entry on (the state
// machine checks each event's key again). Only ingest keys (ck_) open the
// Ingest API. It returns errUnauthorized, an error wrapping
// keyauth.ErrUnavailable when the key could not be checked, or another
// error when the state cannot be read.
func (a *API) authenticate(r *http.Request) (*caller, error) {
	secret, err := secretOf(r)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(secret, apikey.Ingest) {
		return nil, errUnauthorized
	}
	key, err := a.keys.ByHash(r.Context(), apikey.Hash(secret))
	if errors.Is(err, state.ErrNotFound) {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, err
	}
	if key.GetType() != raftv1.KeyType_KEY_TYPE_INGEST {
		return nil, errUnauthorized
	}
	acct, err := a.state.Account(key.GetAccountId())
	if errors.Is(err, state.ErrNotFound) {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("read account: %w", err)
	}
	return &caller{key: key, account: acct}, nil
}
