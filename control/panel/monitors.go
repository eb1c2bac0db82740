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
	// NextLabel says what NextMs is (the next* words), or why there is
	// none.
	NextLabel string
	// Schedule and Zone are a scheduled monitor's (a cron expression or an
	// interval shorthand, and the zone its cron times are read in).
	Schedule, Zone string
	// DaysLeft is an ssl_check's newest verdict's (nil: none).
	DaysLeft *int64
	Enabled  bool
	// Uptime is filled in for the rows shown (fillUptimes).
	Uptime uptimeFigures
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
	lm := state.ListedMonitor{Monitor: m}
	if m.GetKind() != state.KindPing {
		cs, err := p.o.State.CheckStatus(m.GetUuid())
		if err != nil {
			cs = new(statev1.CheckStatus)
		}
		lm.Check = cs
	}
	if off, err := p.o.State.InOfflineRegion(m); err == nil {
		lm.Offline = off
	}
	r := listRow(lm)
	p.addTimes(&r, lm, nowMs)
	return r
}

// listRow is a monitor's row without its times: what the list filters and
// sorts by.
func listRow(lm state.ListedMonitor) monitorRow {
	m := lm.Monitor
	r := monitorRow{UUID: m.GetUuid(), Name: m.GetName(), Display: m.GetDisplayName(), Kind: m.GetKind(),
		Project: m.GetProject(), Tags: m.GetTags(), Enabled: m.GetEnabled()}
	if r.Display == "" {
		r.Display = r.Name
	}
	if m.GetKind() == state.KindPing {
		r.State = state.PingState(m).State
	} else {
		cs := lm.Check
		r.State = "pending"
		switch {
		case !m.GetEnabled():
			r.State = pingstate.Paused
		case cs.GetVerdict() == state.ExecSuccess:
			r.State = pingstate.Up
		case cs.GetVerdict() == state.ExecFailed:
			r.State = pingstate.Down
		}
	}
	if r.Schedule = m.GetSchedule(); strings.ContainsAny(r.Schedule, " @") { // cron: read in a zone
		r.Zone = cmp.Or(m.GetTimezone(), schedule.DefaultZone)
	}
	if lm.Offline {
		r.State = stateUnknown // its agent region is offline
	}
	if m.GetQuiet().GetPaused() {
		r.State = pingstate.Paused // paused at runtime: its alerts are held
	}
	r.Color = stateColors[r.State]
	if r.State == pingstate.Up && m.GetKind() == state.KindSSLCheck && strings.HasPrefix(lm.Check.GetAlert(), "ssl.warning") {
		r.Color = "amber"
	}
	if r.Color == "" {
		r.Color = "gray"
	}
	return r
}

// What the "next" of a monitor is, the same words on the list and on the
// monitor's page.
const (
	nextFinish   = "run must finish"
	nextPing     = "ping expected"
	nextRun      = "next run"
	nextPaused   = "paused"
	nextInterval = "no expected interval"
	nextFirst    = "waiting for a first ping"
	nextFirstRun = "first run expected"
)

// addTimes adds to r the last ping or run, what comes next, and an
// ssl_check's days left.
func (p *Panel) addTimes(r *monitorRow, lm state.ListedMonitor, nowMs int64) {
	m := lm.Monitor
	if !m.GetEnabled() {
		r.NextLabel = nextPaused
	}
	if m.GetKind() == state.KindPing {
		st := state.PingState(m)
		set := state.PingSettings(m)
		r.LastMs = st.LastPingMs
		timeout, late, missed := pingstate.Deadlines(set, st)
		sc, scheduled := state.PingSchedule(m)
		switch next := pingstate.Earliest(timeout, late, missed); {
		case !m.GetEnabled():
		case next != 0 && next == timeout:
			r.NextMs, r.NextLabel = next, nextFinish
		case next != 0:
			r.NextMs, r.NextLabel = next, nextPing
		case scheduled:
			// No deadline: before the first ping, or missed already. The
			// schedule says when a ping is expected next.
			if at := sc.ExpectedAfter(time.UnixMilli(nowMs)); !at.IsZero() {
				r.NextMs, r.NextLabel = at.UnixMilli(), nextPing
				if st.LastPingMs == 0 {
					r.NextLabel = nextFirstRun
				}
			}
		case set.IntervalMs > 0 && st.LastPingMs > 0:
			// Missed already: the next ping its interval expects.
			r.NextMs, r.NextLabel = nextInCadence(st.LastPingMs, set.IntervalMs, nowMs), nextPing
		case set.IntervalMs == 0:
			r.NextLabel = nextInterval
		default:
			r.NextLabel = nextFirst
		}
		return
	}
	cs := lm.Check
	r.LastMs = cs.GetLastExecutionUnixMs()
	if m.GetKind() == state.KindSSLCheck && cs.DaysLeft != nil {
		d := cs.GetDaysLeft()
		r.DaysLeft = &d
	}
	// The leader and the agents alike run a check at its schedule's slot
	// (an interval's shifted by the check's own offset), in its zone.
	if sc, err := schedule.ParseIn(m.GetSchedule(), m.GetTimezone()); err == nil && m.GetEnabled() {
		r.NextMs, r.NextLabel = sc.NextFor(m.GetUuid(), time.UnixMilli(nowMs)).UnixMilli(), nextRun
	}
}

// nextInCadence is the first time after nowMs that lastMs plus a whole
// number of intervals reaches.
func nextInCadence(lastMs, intervalMs, nowMs int64) int64 {
	if nowMs < lastMs {
		return lastMs + intervalMs
	}
	return lastMs + ((nowMs-lastMs)/intervalMs+1)*intervalMs
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
	// it.
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
	// Page is where the events or executions shown are in the history.
	Page historyPage
	// SkipVerify is an http_check's tls_skip_verify: the page warns
	// that its certificate is not verified.
	SkipVerify bool
	// DeleteError is why the last delete was refused.
	DeleteError string
	// CanEdit: the panel has the monitor forms and the user may use them.
	CanEdit bool
	// Ping is how jobs ping a ping monitor (nil for checks); Check what
	// a check checks (nil for ping monitors).
	Ping  *pingHelp
	Check *checkInfo
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
	m, ok := p.monitorOf(w, r)
	if !ok {
		return
	}
	v := &monitorView{NowMs: p.now().UnixMilli(), Schedule: m.GetSchedule(), Group: m.GetNotificationGroup(),
		Timeout: m.GetTimeoutSeconds(), Interval: m.GetExpectedIntervalSeconds(), Grace: m.GetGraceSeconds(), DeleteError: deleteError,
		SkipVerify: m.GetConfig().GetTlsSkipVerify()}
	v.M, v.Quiet = p.row(m, v.NowMs), p.quietOf(m, v.NowMs)
	v.Zone, v.Upcoming = v.M.Zone, upcoming(m, p.now())
	shown := []monitorRow{v.M}
	if err := p.fillUptimes(shown, v.NowMs); err != nil {
		p.internal(w, r, err)
		return
	}
	v.M = shown[0]
	if m.GetKind() == state.KindPing {
		if !p.eventsPage(w, r, m, v) {
			return
		}
	} else if !p.executionsPage(w, r, m, v) {
		return
	}
	if m.GetKind() == state.KindPing {
		v.Ping = newPingHelp(p.publicURL(r), m.GetName())
	}
	v.Check = newCheckInfo(m)
	v.CanEdit = p.o.Manage != nil && editor.allows(s.Role)
	switch r.URL.Query().Get("done") {
	case "created":
		v.Flash = "Created " + v.M.Display + "."
	case "saved":
		v.Flash = "Saved."
	}
	v.Title = v.M.Display
	v.Nav, v.CSRF, v.Account, v.Stale = "monitors", s.CSRF, s.Email, stale
	p.render(w, r, status, "monitor", v)
}

// handleDelete serves POST /monitors/{uuid}/delete: the monitor is deleted
// only when the form's confirm_name is its name, typed again.
func (p *Panel) handleDelete(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	m, ok := p.monitorOf(w, r)
	if !ok {
		return
	}
	if strings.TrimSpace(r.PostFormValue("confirm_name")) != m.GetName() {
		p.showMonitor(w, r, http.StatusUnprocessableEntity, "To delete, type the monitor's name, "+m.GetName()+", exactly.")
		return
	}
	if !p.apply(w, r, &raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{
		AccountId: s.AccountID, MonitorUuid: m.GetUuid(),
	}}}) {
		return
	}
	http.Redirect(w, r, "/?deleted="+urlQueryEscape(m.GetName()), http.StatusSeeOther)
}

// monitorOf reads the session account's monitor of the path's {uuid}
// (another account's is not found); when it cannot, it answers (404, or
// 500) and reports false.
func (p *Panel) monitorOf(w http.ResponseWriter, r *http.Request) (*statev1.Monitor, bool) {
	m, err := p.o.State.Monitor(sessionFrom(r.Context()).AccountID, r.PathValue("uuid"))
	return m, !p.readFailed(w, r, err)
}

// apply proposes cmd; when it is not applied OK, it answers (503 without a
// leader, 404 for what is gone, 500 otherwise) and reports false.
func (p *Panel) apply(w http.ResponseWriter, r *http.Request, cmd *raftv1.Command) bool {
	res, err := p.o.Cluster.Apply(r.Context(), cmd)
	if err != nil {
		p.unavailable(w, r, err)
		return false
	}
	switch res.GetStatus() {
	case raftv1.Status_STATUS_OK:
		return true
	case raftv1.Status_STATUS_NOT_FOUND:
		p.notFound(w, r)
	default:
		p.internal(w, r, errors.New(res.GetMessage()))
	}
	return false
}

// unavailable answers a write the cluster could not take (no leader).
func (p *Panel) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	p.log.Warn("panel write failed", "path", r.URL.Path, "error", err)
	w.Header().Set("Retry-After", "1")
	p.errorPage(w, r, http.StatusServiceUnavailable, "The cluster cannot take changes right now (no leader). Nothing was changed; try again shortly.")
}

// upcomingShown is how many of a cron schedule's next times a monitor's
// page previews.
const upcomingShown = 5

// upcoming previews the next times of m's cron schedule after now, in its
// zone's wall-clock time ("Mon 30 Mar 02:30 CEST"), so a schedule can be
// checked against what was meant, daylight saving included. An interval
// has no preview.
func upcoming(m *statev1.Monitor, now time.Time) []string {
	sc, err := schedule.ParseIn(m.GetSchedule(), m.GetTimezone())
	if err != nil {
		return nil
	}
	if _, interval := sc.Interval(); interval {
		return nil
	}
	var out []string
	for _, t := range sc.NextN(now, upcomingShown) {
		out = append(out, t.In(sc.Zone()).Format("Mon 2 Jan 15:04 MST"))
	}
	return out
}
