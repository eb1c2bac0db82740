package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"lookout/cluster/clusterapi"
	"lookout/control/keyauth"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// requestError is an answer with the body {"error": msg}.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

// missingField is the 400 for a required field that is absent or empty.
func missingField(name string) error {
	return &requestError{status: http.StatusBadRequest, msg: "required field missing: " + name}
}

// invalidField is the 400 for a field of the wrong type or value.
func invalidField(name string) error {
	return &requestError{status: http.StatusBadRequest, msg: "invalid field: " + name}
}

// invalidFieldWhy is the 400 for a field whose value is refused, with the
// reason.
func invalidFieldWhy(name, why string) error {
	return &requestError{status: http.StatusBadRequest, msg: "invalid field: " + name + ": " + why}
}

// The bodies of the answers to a ping.
type (
	errorBody struct {
		Error string `json:"error"`
	}
	successBody struct {
		Status string `json:"status"`
	}
	limitBody struct {
		Status  string `json:"status"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	suspendedBody struct {
		Status   string `json:"status"`
		Quota    string `json:"quota"`
		ResetsAt string `json:"resets_at"`
		Message  string `json:"message"`
	}
)

// writeJSON writes v as the JSON body of a status answer.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// The status line is out; an encoding error can only be a broken
	// connection, which the client sees.
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes {"error": msg}.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

// fail answers err: a requestError as it says; a cluster without a leader,
// a node shutting down, a key that could not be checked with the leader or
// a request that ran out of time as 503 with
// Retry-After: 1 (the client retries; its event_id makes that safe); and
// anything else as a logged 500.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	var re *requestError
	switch {
	case errors.As(err, &re):
		a.metrics.Event("invalid")
		writeError(w, re.status, re.msg)
	case errors.Is(err, clusterapi.ErrNoLeader), errors.Is(err, clusterapi.ErrShutdown), errors.Is(err, keyauth.ErrUnavailable),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		a.metrics.Event("unavailable")
		a.log.Debug("ping not accepted: cluster unavailable", "method", r.Method, "path", r.URL.Path, "error", err)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "unavailable")
	default:
		a.log.Error("ping failed", "method", r.Method, "path", r.URL.Path, "error", err)
		a.metrics.Event("error")
		writeError(w, http.StatusInternalServerError, "internal error")
	}
}

// setQuotaHeaders sets the X-Quota-* headers of the caller's account: from
// q, the quota the state machine reported with the event (so every node
// answers alike), or, when there is none (the ping was refused before it
// reached the state machine), from this node's copy of the state.
func (a *API) setQuotaHeaders(w http.ResponseWriter, c *caller, q *raftv1.QuotaStatus, now time.Time) {
	if q == nil {
		var err error
		q, err = a.state.QuotaStatus(c.account.GetId(), now.UnixMilli())
		if err != nil {
			a.log.Warn("read quota status", "account", c.account.GetId(), "error", err)
			return
		}
	}
	h := w.Header()
	h.Set("X-Quota-State", q.GetState())
	if q.Limit != nil {
		h.Set("X-Quota-Limit", strconv.FormatInt(q.GetLimit(), 10))
	}
	h.Set("X-Quota-Used", strconv.FormatInt(q.GetUsed(), 10))
	reset := time.UnixMilli(q.GetResetsAtUnixMs()).UTC()
	h.Set("X-Quota-Reset", reset.Format(time.RFC3339))
	h.Set("X-Quota-Reset-In", strconv.FormatInt(secondsUntil(now, reset), 10))
}

// secondsUntil is the whole seconds from now to t, rounded up, at least 0.
func secondsUntil(now, t time.Time) int64 {
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
