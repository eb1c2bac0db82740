package manage

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// defaultEventLimit and maxEventLimit bound ?limit= of the event history.
const (
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// eventJSON is one event of a monitor's history.
// timestamp is the event's time in Unix seconds (the sender's, or the
// receipt time); received_at is when a node accepted it, RFC 3339 UTC.
type eventJSON struct {
	EventType  string   `json:"event_type"`
	Status     string   `json:"status,omitempty"`
	State      string   `json:"state,omitempty"`
	Color      string   `json:"color"`
	Duration   *float64 `json:"duration,omitempty"`
	ExitCode   *int64   `json:"exit_code,omitempty"`
	Host       string   `json:"host,omitempty"`
	Message    string   `json:"message,omitempty"`
	Series     string   `json:"series,omitempty"`
	Timestamp  int64    `json:"timestamp"`
	ReceivedAt string   `json:"received_at"`
}

// handleEvents serves GET /api/v1/monitors/{uuid}/events?limit=N&before=C:
// the monitor's events, newest first, below the cursor C when given, and
// next_before (the cursor of the next page) while older ones remain.
// Another account's monitor is a 404.
func (a *API) handleEvents(w http.ResponseWriter, r *http.Request) {
	limit, ok := historyLimit(w, r)
	if !ok {
		return
	}
	before, ok := eventsBefore(w, r)
	if !ok {
		return
	}
	if r.URL.Query().Get("stale") != "true" {
		if err := a.cluster.ConsistentRead(r.Context()); err != nil {
			if !a.unavailable(w, err) {
				a.internal(w, err)
			}
			return
		}
	}
	key := keyFrom(r.Context())
	uuid := r.PathValue("uuid")
	if _, err := a.state.Monitor(key.GetAccountId(), uuid); err != nil {
		if errors.Is(err, state.ErrNotFound) {
			writeError(w, http.StatusNotFound, "not_found", "no monitor "+uuid)
			return
		}
		a.internal(w, err)
		return
	}
	// One more than the page tells whether another page follows.
	events, err := a.state.EventsBefore(key.GetAccountId(), uuid, before, limit+1)
	if err != nil {
		a.internal(w, err)
		return
	}
	body := map[string]any{}
	if len(events) > limit {
		events = events[:limit]
		body["next_before"] = eventCursor(events[limit-1].GetSeq())
	}
	out := make([]eventJSON, 0, len(events))
	for _, e := range events {
		out = append(out, toEventJSON(e))
	}
	body["events"] = out
	writeJSON(w, http.StatusOK, body)
}

// historyLimit reads ?limit= of a history (1 to 1000, default 100); false
// means it answered 400.
func historyLimit(w http.ResponseWriter, r *http.Request) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return defaultEventLimit, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxEventLimit {
		writeError(w, http.StatusBadRequest, "invalid_request", "invalid field: limit: an integer from 1 to 1000")
		return 0, false
	}
	return n, true
}

func toEventJSON(e *statev1.StoredEvent) eventJSON {
	ev := e.GetEvent()
	return eventJSON{
		EventType:  ev.GetEventType(),
		Status:     ev.GetStatus(),
		State:      ev.GetState(),
		Color:      e.GetColor(),
		Duration:   e.Duration,
		ExitCode:   ev.ExitCode,
		Host:       ev.GetHost(),
		Message:    ev.GetMessage(),
		Series:     ev.GetSeries(),
		Timestamp:  e.GetEventTimeUnixMs() / 1000,
		ReceivedAt: time.UnixMilli(ev.GetReceivedUnixMs()).UTC().Format(time.RFC3339Nano),
	}
}
