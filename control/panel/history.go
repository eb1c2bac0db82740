package panel

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// A monitor's page shows its newest events (a check's executions), and
// older pages of them with ?before=: an event's seq, or an execution's
// slot (Unix ms) and region as SLOT.REGION. Only the newest page takes
// live rows.

// historyPage is where a page of events or executions is in the history.
type historyPage struct {
	// Older is the before of the next older page ("" on the last page).
	Older string
	// Newest: the page starts at the newest (and takes live rows).
	Newest bool
}

// eventsPage reads the ping monitor's page of events into v; false means
// it answered.
func (p *Panel) eventsPage(w http.ResponseWriter, r *http.Request, m *statev1.Monitor, v *monitorView) bool {
	acct := m.GetAccountId()
	before := uint64(state.NewestEvents)
	if b := r.URL.Query().Get("before"); b != "" {
		n, err := strconv.ParseUint(b, 10, 64)
		if err != nil {
			p.errorPage(w, r, http.StatusBadRequest, "That page of events does not exist: before must be an event's number.")
			return false
		}
		before = n
	}
	// One more than the page tells whether an older one follows.
	events, err := p.o.State.EventsBefore(acct, m.GetUuid(), before, eventsShown+1)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		p.internal(w, r, err)
		return false
	}
	v.Page.Newest = before == state.NewestEvents
	if len(events) > eventsShown {
		events = events[:eventsShown]
		v.Page.Older = strconv.FormatUint(events[eventsShown-1].GetSeq(), 10)
	}
	for _, e := range events {
		v.Events = append(v.Events, toEventRow(e))
	}
	v.NextSeq = m.GetPing().GetNextSeq()
	if !v.Page.Newest {
		// The chart is of the newest runs, whichever page is shown.
		if events, err = p.o.State.Events(acct, m.GetUuid(), eventsShown); err != nil && !errors.Is(err, state.ErrNotFound) {
			p.internal(w, r, err)
			return false
		}
	}
	v.Chart = eventChart(events)
	return true
}

// executionsPage reads the check's page of executions into v; false means
// it answered.
func (p *Panel) executionsPage(w http.ResponseWriter, r *http.Request, m *statev1.Monitor, v *monitorView) bool {
	acct := m.GetAccountId()
	var before *state.ExecutionPos
	if b := r.URL.Query().Get("before"); b != "" {
		slot, region, _ := strings.Cut(b, ".")
		ms, err := strconv.ParseInt(slot, 10, 64)
		if err != nil || len(region) > state.MaxKeyPartBytes {
			p.errorPage(w, r, http.StatusBadRequest, "That page of executions does not exist.")
			return false
		}
		before = &state.ExecutionPos{SlotMs: ms, Region: region}
	}
	execs, err := p.o.State.ExecutionsBefore(acct, m.GetUuid(), before, eventsShown+1)
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		p.internal(w, r, err)
		return false
	}
	v.Page.Newest = before == nil
	if len(execs) > eventsShown {
		execs = execs[:eventsShown]
		last := state.PosOf(execs[eventsShown-1])
		v.Page.Older = strconv.FormatInt(last.SlotMs, 10) + "." + last.Region
	}
	for _, e := range execs {
		v.Executions = append(v.Executions, toExecRow(e))
	}
	if !v.Page.Newest {
		if execs, err = p.o.State.Executions(acct, m.GetUuid(), eventsShown); err != nil && !errors.Is(err, state.ErrNotFound) {
			p.internal(w, r, err)
			return false
		}
	}
	v.Chart = execChart(execs)
	return true
}
