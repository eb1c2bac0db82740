package manage

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"lookout/control/audit"
	"lookout/control/keyauth"
	"lookout/control/state"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// The scopes of a management key: read for GET, write for POST and PUT,
// delete for DELETE.
const (
	scopeRead   = "read"
	scopeWrite  = "write"
	scopeDelete = "delete"
	// anyScope: any valid key will do.
	anyScope = ""
)

type ctxKey struct{}

// keyFrom returns the management key that authenticated the request.
func keyFrom(ctx context.Context) *raftv1.Key {
	k, _ := ctx.Value(ctxKey{}).(*raftv1.Key)
	return k
}

// auth authenticates a management key (Authorization: Bearer mk_...) by its
// hash in the local state, checks the scope the route needs, and calls next
// with the key in the context, as the key and as the actor of the changes
// the request makes (audit). A revoked key fails as soon as this node has
// applied the revocation; a key this node does not hold is checked with the
// leader before it is refused (503 when that check fails).
func (a *API) auth(scope string, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, problem, err := a.authenticate(r)
		if errors.Is(err, keyauth.ErrUnavailable) {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, "unavailable", "the key cannot be checked now (no leader); try again")
			return
		}
		if err != nil {
			a.internal(w, err)
			return
		}
		allowed := false
		if key != nil {
			allowed = take(w, a.limits.keys, key.GetId(), a.now())
		} else {
			allowed = take(w, a.limits.addrs, keyauth.ClientAddr(r), a.now())
		}
		if !allowed {
			writeError(w, http.StatusTooManyRequests, "rate_limited", "more than 60 requests a minute; try again later")
			return
		}
		if key == nil {
			writeError(w, http.StatusUnauthorized, "unauthenticated", problem)
			return
		}
		a.uses.note(r.Context(), key)
		if scope != anyScope && !slices.Contains(key.GetScopes(), scope) {
			writeScopeError(w, scope)
			return
		}
		ctx := audit.WithActor(context.WithValue(r.Context(), ctxKey{}, key), audit.Key(key))
		next(w, r.WithContext(ctx))
	})
}

// authenticate returns the management key of the request, or nil and why
// not. The Authorization header must be there once, "Bearer <key>" with the
// scheme in any case, as on the Ingest API.
func (a *API) authenticate(r *http.Request) (*raftv1.Key, string, error) {
	secret, _, err := keyauth.BearerToken(r)
	if err != nil || !strings.HasPrefix(secret, apikey.Management) {
		return nil, "a management key is required: Authorization: Bearer mk_...", nil
	}
	key, err := a.keys.ByHash(r.Context(), apikey.Hash(secret))
	if errors.Is(err, state.ErrNotFound) || (err == nil && key.GetType() != raftv1.KeyType_KEY_TYPE_MANAGEMENT) {
		return nil, "invalid management key", nil
	}
	if err != nil {
		return nil, "", err
	}
	return key, "", nil
}
