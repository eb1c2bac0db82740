package manage

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"lookout/cluster/clusterapi"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
)

// writeJSON writes v as the JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError writes the single-cause error body {"message", "code"}.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]string{"message": message, "code": code})
}

// writeScopeError writes the 403 of a named key without the needed scope:
// its code is in error_code, not code (as the Management API has always
// answered it).
func writeScopeError(w http.ResponseWriter, scope string) {
	writeJSON(w, http.StatusForbidden, map[string]string{
		"message":    fmt.Sprintf("this key lacks the %q scope", scope),
		"error_code": "insufficient_scope",
	})
}

// unavailable answers 503 when the cluster cannot serve a consistent read.
func (a *API) unavailable(w http.ResponseWriter, err error) bool {
	if errors.Is(err, clusterapi.ErrNoLeader) || errors.Is(err, clusterapi.ErrShutdown) {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the cluster has no leader; try again")
		return true
	}
	return false
}

// internal logs err and answers 500.
func (a *API) internal(w http.ResponseWriter, err error) {
	a.log.Error("management API", "error", err)
	writeError(w, http.StatusInternalServerError, "internal", "internal error")
}

// writeInvalid answers 422 with the validation body.
func writeInvalid(w http.ResponseWriter, body manifest.ErrorBody) {
	writeJSON(w, http.StatusUnprocessableEntity, body)
}

// writeRefused answers 422 for a PutMonitors the state machine refused,
// under key (manifest or monitors.<i>).
func writeRefused(w http.ResponseWriter, key string, res *raftv1.Result) {
	code := res.GetCode()
	if code == "" {
		code = "invalid"
	}
	writeInvalid(w, manifest.ErrorBody{
		Message:    res.GetMessage(),
		Errors:     map[string][]string{key: {res.GetMessage()}},
		ErrorCodes: map[string][]string{key: {code}},
	})
}

// notFound answers 404 for a monitor.
func notFound(w http.ResponseWriter, uuid string) {
	writeError(w, http.StatusNotFound, "not_found", "no monitor "+uuid)
}

// isNotFound tells whether err is the state's not-found.
func isNotFound(err error) bool { return errors.Is(err, state.ErrNotFound) }
