package ingest

import (
	"context"
	"errors"
	"net/http"
	"time"

	"lookout/cluster/clusterapi"
	"lookout/control/keyauth"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire"
)

// The bodies of the answers to a ping.
type (
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

// fail answers err: a requestError as it says; a cluster without a leader,
// a node shutting down, a key that could not be checked with the leader or
// a request that ran out of time as 503 with
// Retry-After: 1 (the client retries; its event_id makes that safe); and
// anything else as a logged 500.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	var re *pingwire.RequestError
	switch {
	case errors.As(err, &re):
		a.metrics.Event("invalid")
		pingwire.WriteError(w, re.Status, re.Msg)
	case errors.Is(err, clusterapi.ErrNoLeader), errors.Is(err, clusterapi.ErrShutdown), errors.Is(err, keyauth.ErrUnavailable),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		a.metrics.Event("unavailable")
		a.log.Debug("ping not accepted: cluster unavailable", "method", r.Method, "path", r.URL.Path, "error", err)
		w.Header().Set("Retry-After", "1")
		pingwire.WriteError(w, http.StatusServiceUnavailable, "unavailable")
	default:
		a.log.Error("ping failed", "method", r.Method, "path", r.URL.Path, "error", err)
		a.metrics.Event("error")
		pingwire.WriteError(w, http.StatusInternalServerError, "internal error")
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
	pingwire.SetQuotaHeaders(w.Header(), q, now)
}
