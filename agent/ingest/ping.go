package ingest

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"lookout/agent/buffer"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire"
)

// fullRetryAfter is the Retry-After of a 503 buffer_full, in seconds: the
// buffer empties only when the control plane is reached again.
const fullRetryAfter = "5"

// handlePost serves POST /ping: an event as a JSON object (whatever the
// Content-Type says).
func (a *API) handlePost(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	key, ok := a.admit(w, r, now)
	if !ok {
		return
	}
	ev, err := pingwire.ParseBody(w, r)
	if err != nil {
		a.refuse(w, key, now, err)
		return
	}
	a.accept(w, r, key, now, ev)
}

// handleGet serves GET (and HEAD) /ping/{monitor}: an event as query
// parameters.
func (a *API) handleGet(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	key, ok := a.admit(w, r, now)
	if !ok {
		return
	}
	ev, err := pingwire.ParseQuery(r.PathValue("monitor"), r.URL.Query())
	if err != nil {
		a.refuse(w, key, now, err)
		return
	}
	a.accept(w, r, key, now, ev)
}

// admit authenticates r against the assigned ingest keys and takes a
// token of the key's rate limit; when either fails it answers (401, 429)
// and returns false.
func (a *API) admit(w http.ResponseWriter, r *http.Request, now time.Time) (*agentv1.IngestKey, bool) {
	hash, err := pingwire.IngestSecretHash(r)
	var key *agentv1.IngestKey
	if err == nil {
		var found bool
		if key, found = a.keys.KeyByHash(hash); !found {
			key = nil
		}
	}
	if key == nil {
		a.count("unauthorized")
		pingwire.WriteError(w, http.StatusUnauthorized, "unauthorized")
		return nil, false
	}
	if ok, wait := a.limits.Allow(key.GetId(), key.GetPlan(), now); !ok {
		a.setQuotaHeaders(w, key, now)
		w.Header().Set("Retry-After", strconv.FormatInt(pingwire.RetryAfter(wait), 10))
		a.count("rate_limited")
		pingwire.WriteError(w, http.StatusTooManyRequests, "rate_limited")
		return nil, false
	}
	return key, true
}

// refuse answers a request error (400, 413) with the quota headers.
func (a *API) refuse(w http.ResponseWriter, key *agentv1.IngestKey, now time.Time, err error) {
	a.setQuotaHeaders(w, key, now)
	var re *pingwire.RequestError
	if errors.As(err, &re) {
		a.count("invalid")
		pingwire.WriteError(w, re.Status, re.Msg)
		return
	}
	a.log.Error("ping failed", "error", err)
	a.count("error")
	pingwire.WriteError(w, http.StatusInternalServerError, "internal error")
}

// accept completes ev, appends it to the buffer and answers once the
// append returned.
func (a *API) accept(w http.ResponseWriter, r *http.Request, key *agentv1.IngestKey, now time.Time, ev *raftv1.Event) {
	if err := pingwire.MergeEventID(ev, r.Header.Get("Idempotency-Key")); err != nil {
		a.refuse(w, key, now, err)
		return
	}
	if err := pingwire.CheckTimestamp(ev, now, a.retention); err != nil {
		a.refuse(w, key, now, err)
		return
	}
	ev.AccountId = key.GetAccountId()
	ev.KeyId = key.GetId()
	ev.ReceivedUnixMs = now.UnixMilli()
	if ev.EventId == "" {
		// The control plane stores each event_id once: forwarding the
		// buffer again after a lost answer stores nothing twice.
		ev.EventId = uuid.NewString()
	}
	a.setQuotaHeaders(w, key, now)
	err := a.sink.AppendEvent(ev)
	switch {
	case err == nil:
		a.count("buffered")
		// The control plane has not seen it yet: whether it creates a
		// monitor is not known here.
		pingwire.WriteSuccess(w, false)
	case errors.Is(err, buffer.ErrFull):
		a.count("buffer_full")
		w.Header().Set("Retry-After", fullRetryAfter)
		pingwire.WriteError(w, http.StatusServiceUnavailable, "buffer_full")
	case errors.Is(err, buffer.ErrUnavailable):
		// The buffer logged why, once; /health says it.
		a.count("buffer_unavailable")
		w.Header().Set("Retry-After", fullRetryAfter)
		pingwire.WriteError(w, http.StatusServiceUnavailable, "buffer_unavailable")
	case errors.Is(err, buffer.ErrClosed):
		a.count("unavailable")
		w.Header().Set("Retry-After", "1")
		pingwire.WriteError(w, http.StatusServiceUnavailable, "unavailable")
	default:
		a.log.Error("buffer a ping", "monitor", ev.GetMonitor(), "error", err)
		a.count("error")
		pingwire.WriteError(w, http.StatusInternalServerError, "internal error")
	}
}

// setQuotaHeaders sets the X-Quota-* headers from the last quota the
// control plane reported for the key's account, when there is one.
func (a *API) setQuotaHeaders(w http.ResponseWriter, key *agentv1.IngestKey, now time.Time) {
	if a.quotas == nil {
		return
	}
	if q := a.quotas.Last(key.GetAccountId()); q != nil {
		pingwire.SetQuotaHeaders(w.Header(), q, now)
	}
}

// count counts one answered ping.
func (a *API) count(outcome string) { a.events.WithLabelValues(outcome).Inc() }
