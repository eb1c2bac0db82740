package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire"
)

// handlePost serves POST /ping: an event as a JSON object. The
// Content-Type is not checked (curl -d sends a form type by default); the
// body is read as JSON whatever it says.
func (a *API) handlePost(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	c, ok := a.admit(w, r, now)
	if !ok {
		return
	}
	ev, err := pingwire.ParseBody(w, r)
	if err != nil {
		a.refuse(w, r, c, now, err)
		return
	}
	a.ingest(w, r, c, now, ev)
}

// handleGet serves GET /ping/{monitor}: an event as query parameters, for
// shell one-liners, devices and CI. HEAD is served alike.
func (a *API) handleGet(w http.ResponseWriter, r *http.Request) {
	now := a.now()
	c, ok := a.admit(w, r, now)
	if !ok {
		return
	}
	ev, err := pingwire.ParseQuery(r.PathValue("monitor"), r.URL.Query())
	if err != nil {
		a.refuse(w, r, c, now, err)
		return
	}
	a.ingest(w, r, c, now, ev)
}

// admit authenticates r and takes a token of its key's rate limit; when
// either fails it answers (401, 429, 503 when an unknown key could not be
// checked with the leader, 500) and returns false.
func (a *API) admit(w http.ResponseWriter, r *http.Request, now time.Time) (*caller, bool) {
	c, err := a.authenticate(r)
	if errors.Is(err, pingwire.ErrUnauthorized) {
		a.metrics.Event("unauthorized")
		pingwire.WriteError(w, http.StatusUnauthorized, "unauthorized")
		return nil, false
	}
	if err != nil {
		a.fail(w, r, fmt.Errorf("authenticate: %w", err))
		return nil, false
	}
	if ok, wait := a.limits.Allow(c.key.GetId(), c.account.GetPlan(), now); !ok {
		a.setQuotaHeaders(w, c, nil, now)
		w.Header().Set("Retry-After", strconv.FormatInt(pingwire.RetryAfter(wait), 10))
		a.metrics.Event("rate_limited")
		pingwire.WriteError(w, http.StatusTooManyRequests, "rate_limited")
		return nil, false
	}
	return c, true
}

// refuse answers a ping that was not submitted, with the quota headers of
// this node's copy of the state.
func (a *API) refuse(w http.ResponseWriter, r *http.Request, c *caller, now time.Time, err error) {
	a.setQuotaHeaders(w, c, nil, now)
	a.fail(w, r, err)
}

// ingest completes ev, submits it to the batcher and answers with the
// state machine's outcome.
func (a *API) ingest(w http.ResponseWriter, r *http.Request, c *caller, now time.Time, ev *raftv1.Event) {
	if err := pingwire.MergeEventID(ev, r.Header.Get("Idempotency-Key")); err != nil {
		a.refuse(w, r, c, now, err)
		return
	}
	if err := pingwire.CheckTimestamp(ev, now, a.retention); err != nil {
		a.refuse(w, r, c, now, err)
		return
	}
	ev.AccountId = c.account.GetId()
	ev.KeyId = c.key.GetId()
	ev.ReceivedUnixMs = now.UnixMilli()
	res, err := a.batcher.Submit(r.Context(), ev)
	if err != nil {
		a.refuse(w, r, c, now, err)
		return
	}
	if label := outcomeLabel(res.GetOutcome()); label != "" {
		a.metrics.Event(label)
	}
	if res.GetOutcome() == raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED {
		// The key was revoked before the batch was applied.
		pingwire.WriteError(w, http.StatusUnauthorized, "unauthorized")
		return
	}
	a.setQuotaHeaders(w, c, res.GetQuota(), now)
	switch res.GetOutcome() {
	case raftv1.EventOutcome_EVENT_OUTCOME_STORED, raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE:
		pingwire.WriteSuccess(w, res.GetCreated())
	case raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT:
		pingwire.WriteJSON(w, http.StatusForbidden, limitBody{
			Status: "error", Code: "monitor_limit_reached",
			Message: monitorLimitMessage(c, ev.GetMonitor()),
		})
	case raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_RATE:
		w.Header().Set("Retry-After", strconv.FormatInt(pingwire.SecondsUntil(now, now.Truncate(time.Minute).Add(time.Minute)), 10))
		pingwire.WriteJSON(w, http.StatusTooManyRequests, limitBody{
			Status: "error", Code: "monitor_creation_rate_limited",
			Message: monitorRateMessage(c, ev.GetMonitor()),
		})
	case raftv1.EventOutcome_EVENT_OUTCOME_SUSPENDED:
		resets := time.UnixMilli(res.GetQuota().GetResetsAtUnixMs()).UTC()
		pingwire.WriteJSON(w, http.StatusOK, suspendedBody{
			Status: "ok", Quota: "suspended", ResetsAt: resets.Format(time.RFC3339),
			Message: "The account's monthly event quota is used up: events are not stored and alerting is paused until the quota resets or the plan is upgraded.",
		})
	default:
		a.fail(w, r, fmt.Errorf("state machine gave outcome %s for an event", res.GetOutcome()))
	}
}

// outcomeLabel names a state machine outcome for the events metric; ""
// for one this node does not know (answered, and counted, as an error).
func outcomeLabel(o raftv1.EventOutcome) string {
	switch o {
	case raftv1.EventOutcome_EVENT_OUTCOME_STORED:
		return "stored"
	case raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE:
		return "duplicate"
	case raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT:
		return "monitor_limit"
	case raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_RATE:
		return "monitor_rate"
	case raftv1.EventOutcome_EVENT_OUTCOME_SUSPENDED:
		return "suspended"
	case raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED:
		return "unauthorized"
	}
	return ""
}

// monitorLimitMessage explains a 403 monitor_limit_reached.
func monitorLimitMessage(c *caller, monitor string) string {
	msg := fmt.Sprintf("Monitor %q does not exist and the account is at its plan's monitor limit", monitor)
	if p := c.account.GetPlan(); p != nil && p.MonitorLimit != nil {
		msg += fmt.Sprintf(" (%d)", p.GetMonitorLimit())
	}
	return msg + ": the event was not stored. Delete a monitor or upgrade the plan."
}

// monitorRateMessage explains a 429 monitor_creation_rate_limited.
func monitorRateMessage(c *caller, monitor string) string {
	limit := state.MonitorsCreatedPerMinute(c.account.GetPlan())
	return fmt.Sprintf("Monitor %q does not exist and the account's pings already created %d monitors this minute, "+
		"the plan's limit: the event was not stored. Try again next minute, or create the monitor through the Management API.", monitor, limit)
}
