package panel

import (
	"cmp"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
	"lookout/internal/schedule"
)

// monitorRow is one monitor as the list (and a monitor's page) shows it.
type monitorRow struct {
	UUID, Name, Display, Kind, Project string
	Tags                               []string
	// State is the monitor's state; Color its display class: green, blue,
	// amber, red or gray.
	State, Color string
	// LastMs is the last ping (ping) or the last finished execution
	// (check); NextMs the next deadline (ping) or run (check); 0: none.
	LastMs, NextMs int64
	// NextLabel says what NextMs is.
	NextLabel string
	// Schedule and Zone are a scheduled monitor's (a cron expression or an
	// interval shorthand, and the zone its cron times are read in).
	Schedule, Zone string
	// DaysLeft is an ssl_check's newest verdict's (nil: none).
	DaysLeft *int64
	Enabled  bool
}

// stateUnknown is the state of a monitor whose agent region is offline,
// as the Management API shows it.
const stateUnknown = "unknown"

// stateColors are the display classes of the monitor states.
var stateColors = map[string]string{
	pingstate.New: "gray", pingstate.Paused: "gray", "pending": "gray", stateUnknown: "gray",
	pingstate.Up: "green", pingstate.Running: "blue", pingstate.Late: "amber",
	pingstate.Down: "red", pingstate.Failed: "red",
}

// row reads a monitor's state as of nowMs.
func (p *Panel) row(m *statev1.Monitor, nowMs int64) monitorRow {
	r := monitorRow{UUID: m.GetUuid(), Name: m.GetName(), Display: m.GetDisplayName(), Kind: m.GetKind(),
		Project: m.GetProject(), Tags: m.GetTags(), Enabled: m.GetEnabled()}
	if r.Display == "" {
		r.Display = r.Name
	}
	if m.GetKind() == state.KindPing {
		st := state.PingState(m)
		r.State, r.LastMs = st.State, st.LastPingMs
		timeout, late, missed := pingstate.Deadlines(state.PingSettings(m), st)
		sc, scheduled := state.PingSchedule(m)
		switch next := pingstate.Earliest(timeout, late, missed); {
		case next == 0 && scheduled && st.State == pingstate.New && m.GetEnabled():
			// No deadline before the first ping: show when it should come.
			if first := sc.ExpectedAfter(p.now()); !first.IsZero() {
				r.NextMs, r.NextLabel = first.UnixMilli(), "first run expected"
			}
		case next == 0:
		case next == timeout:
			r.NextMs, r.NextLabel = next, "run must finish"
		default:
			r.NextMs, r.NextLabel = next, "next ping expected"
		}
	} else {
		cs, err := p.o.State.CheckStatus(m.GetUuid())
		if err != nil {
			cs = new(statev1.CheckStatus)
		}
		r.State, r.LastMs = "pending", cs.GetLastExecutionUnixMs()
		switch {
		case !m.GetEnabled():
			r.State = pingstate.Paused
		case cs.GetVerdict() == state.ExecSuccess:
			r.State = pingstate.Up
		case cs.GetVerdict() == state.ExecFailed:
			r.State = pingstate.Down
		}
		if m.GetKind() == state.KindSSLCheck && cs.DaysLeft != nil {
			d := cs.GetDaysLeft()
			r.DaysLeft = &d
		}
		if sc, ok := state.LeaderSchedule(m); ok {
			r.NextMs, r.NextLabel = sc.NextFor(m.GetUuid(), p.now()).UnixMilli(), "next run"
		}
	}
	if r.Schedule = m.GetSchedule(); strings.ContainsAny(r.Schedule, " @") { // cron: read in a zone
		r.Zone = cmp.Or(m.GetTimezone(), schedule.DefaultZone)
	}
	if off, err := p.o.State.InOfflineRegion(m); err == nil && off {
		r.State = stateUnknown // its agent region is offline (decisions.md 7)
	}
	if m.GetQuiet().GetPaused() {
		r.State = pingstate.Paused // paused at runtime: its alerts are held
	}
	r.Color = stateColors[r.State]
	if r.State == pingstate.Up && m.GetKind() == state.KindSSLCheck && strings.HasPrefix(p.checkAlert(m), "ssl.warning") {
		r.Color = "amber"
	}
	if r.Color == "" {
		r.Color = "gray"
	}
	return r
}

func (p *Panel) checkAlert(m *statev1.Monitor) string {
	cs, err := p.o.State.CheckStatus(m.GetUuid())
	if err != nil {
		return ""
	}
	return cs.GetAlert()
}

type monitorsView struct {
	baseView
	NowMs                     int64
	Rows                      []monitorRow
	Total, Down, Late         int
	Projects, Tags, States    []string
	Project, Tag, StateFilter string
	Filtered                  bool
}

// handleMonitors serves GET /: the account's monitors, filtered by the
// query's project, tag and state.
func (p *Panel) handleMonitors(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	stale := p.refresh(r)
	monitors, err := p.o.State.Monitors(s.AccountID)
	if err != nil {
		p.internal(w, r, err)
		return
	}
	q := r.URL.Query()
	v := &monitorsView{NowMs: p.now().UnixMilli(), Project: q.Get("project"), Tag: q.Get("tag"), StateFilter: q.Get("state")}
	v.Filtered = v.Project != "" || v.Tag != "" || v.StateFilter != ""
	projects, tags, states := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, m := range monitors {
		row := p.row(m, v.NowMs)
		v.Total++
		switch row.State {
		case pingstate.Down, pingstate.Failed:
			v.Down++
		case pingstate.Late:
			v.Late++
		}
		if row.Project != "" {
			projects[row.Project] = true
		}
		for _, t := range row.Tags {
			tags[t] = true
		}
		states[row.State] = true
		if (v.Project == "" || row.Project == v.Project) && (v.Tag == "" || contains(row.Tags, v.Tag)) && (v.StateFilter == "" || row.State == v.StateFilter) {
			v.Rows = append(v.Rows, row)
		}
	}
	// The ones needing attention first, then by name.
	rank := map[string]int{"red": 0, "amber": 1, "blue": 2, "green": 3, "gray": 4}
	slices.SortStableFunc(v.Rows, func(a, b monitorRow) int {
		if d := rank[a.Color] - rank[b.Color]; d != 0 {
			return d
		}
		return strings.Compare(a.Display, b.Display)
	})
	v.Projects, v.Tags, v.States = sortedKeys(projects), sortedKeys(tags), sortedKeys(states)
	v.Title = listTitle(v.Down, v.Late)
	v.Nav, v.CSRF, v.Account, v.Stale = "monitors", s.CSRF, s.Email, stale
	if d := q.Get("deleted"); d != "" {
		v.Flash = "Deleted " + d + "."
	}
	p.render(w, r, http.StatusOK, "monitors", v)
}

// listTitle is the list's title, with what needs attention first.
func listTitle(down, late int) string {
	var parts []string
	if down > 0 {
		parts = append(parts, itoa(down)+" down")
	}
	if late > 0 {
		parts = append(parts, itoa(late)+" late")
	}
	if len(parts) == 0 {
		return "Monitors"
	}
	return "(" + strings.Join(parts, ", ") + ") Monitors"
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// eventsShown is how many events and executions a monitor's page shows.
const eventsShown = 100

type monitorView struct {
	baseView
	NowMs    int64
	M        monitorRow
	Schedule string
	// Zone is the schedule's time zone; Upcoming the next cron times in
	// it, as its wall clock shows them.
	Zone     string
	Upcoming []string
	Interval int64
	Grace    int64
	Timeout  int64
	Group    string
	Events   []eventRow
	// NextSeq is one past the newest event shown: the live stream starts
	// there.
	NextSeq    uint64
	Chart      chart
	Executions []execRow
	// DeleteError is why the last delete was refused.
	DeleteError string
	// Quiet is what the alert rules show (quiet.go).
	Quiet quietView
}

// handleMonitor serves GET /monitors/{uuid}: a monitor of the account (any
// other is a 404, as an unknown one).
func (p *Panel) handleMonitor(w http.ResponseWriter, r *http.Request) {
	p.showMonitor(w, r, http.StatusOK, "")
}

func (p *Panel) showMonitor(w http.ResponseWriter, r *http.Request, status int, deleteError string) {
	s := sessionFrom(r.Context())
	stale := p.refresh(r)
	m, err := p.o.State.Monitor(s.AccountID, r.PathValue("uuid"))
	if errors.Is(err, state.ErrNotFound) {
		p.notFound(w, r)
		return
	}
	if err != nil {
		p.internal(w, r, err)
		return
	}
	v := &monitorView{NowMs: p.now().UnixMilli(), Schedule: m.GetSchedule(), Group: m.GetNotificationGroup(),
		Timeout: m.GetTimeoutSeconds(), Interval: m.GetExpectedIntervalSeconds(), Grace: m.GetGraceSeconds(), DeleteError: deleteError}
	v.M, v.Quiet = p.row(m, v.NowMs), p.quietOf(m, v.NowMs)
	v.Zone, v.Upcoming = v.M.Zone, upcoming(m, p.now())
	if m.GetKind() == state.KindPing {
		events, err := p.o.State.Events(s.AccountID, m.GetUuid(), eventsShown)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			p.internal(w, r, err)
			return
		}
		for _, e := range events {
			v.Events = append(v.Events, toEventRow(e))
		}
		if len(events) > 0 {
			v.NextSeq = events[0].GetSeq() + 1
		}
		v.Chart = eventChart(events)
	} else {
		execs, err := p.o.State.Executions(s.AccountID, m.GetUuid(), eventsShown)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			p.internal(w, r, err)
			return
		}
		for _, e := range execs {
			v.Executions = append(v.Executions, toExecRow(e))
		}
		v.Chart = execChart(execs)
	}
	v.Title = v.M.Display
	v.Nav, v.CSRF, v.Account, v.Stale = "monitors", s.CSRF, s.Email, stale
	p.render(w, r, status, "monitor", v)
}

// handleDelete serves POST /monitors/{uuid}/delete: the monitor is deleted
// only when the form's confirm_name is its name, typed again.
func (p *Panel) handleDelete(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	m, err := p.o.State.Monitor(s.AccountID, r.PathValue("uuid"))
	if errors.Is(err, state.ErrNotFound) {
		p.notFound(w, r)
		return
	}
	if err != nil {
		p.internal(w, r, err)
		return
	}
	if strings.TrimSpace(r.PostFormValue("confirm_name")) != m.GetName() {
		p.showMonitor(w, r, http.StatusUnprocessableEntity, "To delete, type the monitor's name, "+m.GetName()+", exactly.")
		return
	}
	res, err := p.o.Cluster.Apply(r.Context(), &raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{
		AccountId: s.AccountID, MonitorUuid: m.GetUuid(),
	}}})
	if err != nil {
		p.unavailable(w, r, err)
		return
	}
	switch res.GetStatus() {
	case raftv1.Status_STATUS_OK:
	case raftv1.Status_STATUS_NOT_FOUND:
		p.notFound(w, r)
		return
	default:
		p.internal(w, r, errors.New(res.GetMessage()))
		return
	}
	http.Redirect(w, r, "/?deleted="+urlQueryEscape(m.GetName()), http.StatusSeeOther)
}

// unavailable answers a write the cluster could not take (no leader).
func (p *Panel) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	p.log.Warn("panel write failed", "path", r.URL.Path, "error", err)
	w.Header().Set("Retry-After", "1")
	p.errorPage(w, r, http.StatusServiceUnavailable, "The cluster cannot take changes right now (no leader). Nothing was changed; try again shortly.")
}

// upcomingShown is how many of a cron schedule's next times a monitor's
// page previews.
const upcomingShown = 3

// upcoming previews the next times of m's cron schedule after now, in its
// zone's wall-clock time ("Mon 30 Mar 02:30 CEST"), so a schedule can be
// checked against what was meant, daylight saving included. An interval
// has no preview.
func upcoming(m *statev1.Monitor, now time.Time) []string {
	sc, err := schedule.ParseIn(m.GetSchedule(), m.GetTimezone())
	if _, interval := sc.Interval(); err != nil || interval {
		return nil
	}
	var out []string
	for _, t := range sc.NextN(now, upcomingShown) {
		out = append(out, t.In(sc.Zone()).Format("Mon 2 Jan 15:04 MST"))
	}
	return out
}
