package manage

import (
	"errors"
	"io"
	"net/http"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
)

// maxBody bounds request bodies (a bundle of thousands of monitors fits).
const maxBody = 16 << 20

// consistent makes the local state reflect every acknowledged write,
// unless the request asked for ?stale=true; false means it answered.
func (a *API) consistent(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Query().Get("stale") == "true" {
		return true
	}
	if err := a.cluster.ConsistentRead(r.Context()); err != nil {
		if !a.unavailable(w, err) {
			a.internal(w, err)
		}
		return false
	}
	return true
}

// body reads the request body; false means it answered (413).
func (a *API) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", "the body is over 16 MiB")
		return nil, false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "could not read the body")
		return nil, false
	}
	return b, true
}

// apply proposes cmd; false means it answered (503 or 500).
func (a *API) apply(w http.ResponseWriter, r *http.Request, cmd *raftv1.Command) (*raftv1.Result, bool) {
	res, err := a.cluster.Apply(r.Context(), cmd)
	if err != nil {
		if !a.unavailable(w, err) {
			a.internal(w, err)
		}
		return nil, false
	}
	return res, true
}

// manifestOptions tells validation which notification groups the account
// has.
func (a *API) manifestOptions(accountID string) manifest.Options {
	return manifest.Options{GroupExists: func(name string) bool {
		_, err := a.state.NotificationGroupByName(accountID, name)
		return err == nil
	}}
}
