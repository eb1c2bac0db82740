package ingest

import (
	"errors"
	"fmt"
	"net/http"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingwire"
)

// caller is who sent a ping: the ingest key and its account.
type caller struct {
	key     *raftv1.Key
	account *statev1.Account
}

// authenticate finds the ingest key of r and its account in the local
// state. A key this node does not hold is checked with the leader first
// (keyauth.Keys), so a node catching up does not refuse a new key; a
// revoked key stops working on this node as soon as it applies the
// revocation, and on every node from the revocation's entry on (the state
// machine checks each event's key again). Only ingest keys (ck_) open the
// Ingest API. It returns pingwire.ErrUnauthorized, an error wrapping
// keyauth.ErrUnavailable when the key could not be checked, or another
// error when the state cannot be read.
func (a *API) authenticate(r *http.Request) (*caller, error) {
	hash, err := pingwire.IngestSecretHash(r)
	if err != nil {
		return nil, err
	}
	key, err := a.keys.ByHash(r.Context(), hash)
	if errors.Is(err, state.ErrNotFound) {
		return nil, pingwire.ErrUnauthorized
	}
	if err != nil {
		return nil, err
	}
	if key.GetType() != raftv1.KeyType_KEY_TYPE_INGEST {
		return nil, pingwire.ErrUnauthorized
	}
	acct, err := a.state.Account(key.GetAccountId())
	if errors.Is(err, state.ErrNotFound) {
		return nil, pingwire.ErrUnauthorized
	}
	if err != nil {
		return nil, fmt.Errorf("read account: %w", err)
	}
	return &caller{key: key, account: acct}, nil
}
