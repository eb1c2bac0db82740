package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"lookout/cluster/clusterapi"
	"lookout/control/audit"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// The error codes of the operator API, the "code" of an error body.
const (
	codeInvalidRequest   = "invalid_request"
	codeInvalidJSON      = "invalid_json"
	codeUnauthenticated  = "unauthenticated"
	codeNotFound         = "not_found"
	codeConflict         = "conflict"
	codeMethodNotAllowed = "method_not_allowed"
	codeTooLarge         = "request_too_large"
	codeUnavailable      = "unavailable"
	codeInternal         = "internal"
	codeDeliveryFailed   = "delivery_failed"
)

// Error is an error the operator API answers with: an HTTP status and the
// body {"message": ..., "code": ...}. CreateAccount returns it for invalid
// requests and for the cluster's NOT_FOUND and CONFLICT results.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// errorBody is the JSON of every error answer.
type errorBody struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

// invalidField is the 400 for a field that is missing or wrong; why may be
// empty.
func invalidField(name, why string) *Error {
	msg := "invalid field: " + name
	if why != "" {
		msg += ": " + why
	}
	return &Error{Status: http.StatusBadRequest, Code: codeInvalidRequest, Message: msg}
}

// writeJSON writes v as the JSON body of a status answer.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status line is out; an encoding error can only be a broken
	// connection, which the client sees.
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes an error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Message: message, Code: code})
}

// fail answers err: an *Error as it says, a cluster without a leader (or a
// request that ran out of time waiting for one) as 503 with Retry-After, and
// anything else as a logged 500.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	switch {
	case errors.As(err, &e):
		writeError(w, e.Status, e.Code, e.Message)
	case errors.Is(err, clusterapi.ErrNoLeader), errors.Is(err, clusterapi.ErrShutdown),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		a.log.Debug("cluster unavailable", "method", r.Method, "path", r.URL.Path, "error", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "the cluster has no leader; retry shortly")
	default:
		a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		writeError(w, http.StatusInternalServerError, codeInternal, "internal error")
	}
}

// checkCommand answers 413 request_too_large for a command over the state
// machine's bounds (state.CheckCommand), before it is proposed; what names
// the thing that is too large.
func checkCommand(cmd *raftv1.Command, what string) error {
	if err := state.CheckCommand(cmd); err != nil {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge,
			Message: fmt.Sprintf("%s is too large to store (%v)", what, err)}
	}
	return nil
}

// apply proposes cmd, with the actor of ctx (audit.Stamp: the operator of
// an HTTP request, the panel user of a Go call the panel makes), and turns
// a result other than OK into an error:
// NOT_FOUND and CONFLICT become 404 and 409 (a CONFLICT with a code, such
// as channel_limit_reached, keeps it); INVALID is a bug of this package (it
// proposed a malformed command) and becomes a plain error, 500.
func (a *API) apply(ctx context.Context, cmd *raftv1.Command) error {
	res, err := a.cluster.Apply(ctx, audit.Stamp(ctx, cmd))
	if err != nil {
		return fmt.Errorf("apply command: %w", err)
	}
	switch res.GetStatus() {
	case raftv1.Status_STATUS_OK:
		return nil
	case raftv1.Status_STATUS_NOT_FOUND:
		return &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: res.GetMessage()}
	case raftv1.Status_STATUS_CONFLICT:
		code := codeConflict
		if res.GetCode() != "" {
			code = res.GetCode()
		}
		return &Error{Status: http.StatusConflict, Code: code, Message: res.GetMessage()}
	default:
		return fmt.Errorf("state machine refused the command (%s): %s", res.GetStatus(), res.GetMessage())
	}
}
