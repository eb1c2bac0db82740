package admin

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// keyListItem is one key of GET /admin/v1/accounts/{id}/keys: never its
// secret or hash.
type keyListItem struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Scopes    []string `json:"scopes"`
	CreatedAt string   `json:"created_at"`
	// LastUsedAt is null until the key is used (recorded to the hour).
	LastUsedAt *string `json:"last_used_at"`
}

// handleListKeys serves GET /admin/v1/accounts/{id}/keys[?stale=true]: the
// account's keys in id order, with when each was made and last used.
func (a *API) handleListKeys(w http.ResponseWriter, r *http.Request) {
	if err := a.readConsistency(r); err != nil {
		a.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	if _, err := a.state.Account(id); errors.Is(err, state.ErrNotFound) {
		a.fail(w, r, &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "account " + id + " not found"})
		return
	} else if err != nil {
		a.fail(w, r, fmt.Errorf("read account %s: %w", id, err))
		return
	}
	keys, err := a.state.Keys(id)
	if err != nil {
		a.fail(w, r, fmt.Errorf("read keys of %s: %w", id, err))
		return
	}
	used, err := a.state.KeysLastUsed(id)
	if err != nil {
		a.fail(w, r, fmt.Errorf("read keys' use of %s: %w", id, err))
		return
	}
	out := make([]keyListItem, 0, len(keys))
	for _, k := range keys {
		item := keyListItem{ID: k.GetId(), Name: k.GetName(), Type: keyTypeIngest, Scopes: append([]string{}, k.GetScopes()...),
			CreatedAt: time.UnixMilli(k.GetCreatedUnixMs()).UTC().Format(time.RFC3339), LastUsedAt: utcMs(used[k.GetId()])}
		if k.GetType() == raftv1.KeyType_KEY_TYPE_MANAGEMENT {
			item.Type = keyTypeManagement
		}
		out = append(out, item)
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": out})
}

// utcMs is ms as RFC 3339 UTC, nil for 0 (not used yet).
func utcMs(ms int64) *string {
	if ms == 0 {
		return nil
	}
	s := time.UnixMilli(ms).UTC().Format(time.RFC3339)
	return &s
}
