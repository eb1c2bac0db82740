package panel

import (
	"net/http"
	"strings"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/names"
)

// quietView is what a monitor's page shows of the alert rules
// (decisions.md 12): its runtime pause, the maintenance window it is in.
type quietView struct {
	Paused  bool
	UntilMs int64
	Reason  string
	// Window is the name of the maintenance window that holds it now,
	// until WindowEndsMs.
	Window       string
	WindowEndsMs int64
	// Deps are the monitors it depends on; HeldBy the first of them that
	// is down.
	Deps   []depView
	HeldBy string
}

// depView is one monitor a monitor depends on.
type depView struct {
	Label, UUID string
	// State is down, up (not down), or missing (the account has no such
	// monitor: it holds nothing).
	State string
}

// quietOf is m's quiet view at nowMs.
func (p *Panel) quietOf(m *statev1.Monitor, nowMs int64) quietView {
	q := m.GetQuiet()
	v := quietView{Paused: q.GetPaused(), UntilMs: q.GetPausedUntilUnixMs(), Reason: q.GetPauseReason()}
	if w, end, err := p.o.State.MonitorInWindow(m, nowMs); err == nil && w != nil {
		v.Window, v.WindowEndsMs = w.GetName(), end.UnixMilli()
	}
	deps, _ := p.o.State.Dependencies(m)
	for _, d := range deps {
		dv := depView{Label: d.Kind + " " + d.Name, UUID: d.Monitor.GetUuid(), State: "up"}
		switch {
		case d.Monitor == nil:
			dv.State = "missing"
		case d.Down:
			dv.State = "down"
			if v.HeldBy == "" {
				v.HeldBy = dv.Label
			}
		}
		v.Deps = append(v.Deps, dv)
	}
	return v
}

// pauseChoices are the lengths the monitor page offers ("": until
// resumed).
var pauseChoices = map[string]time.Duration{"": 0, "1h": time.Hour, "4h": 4 * time.Hour, "24h": 24 * time.Hour, "168h": 7 * 24 * time.Hour}

// handlePause serves POST /monitors/{uuid}/pause (form: for, reason).
func (p *Panel) handlePause(w http.ResponseWriter, r *http.Request) {
	d, ok := pauseChoices[r.PostFormValue("for")]
	if !ok {
		p.errorPage(w, r, http.StatusUnprocessableEntity, "Pause for 1 hour, 4 hours, 1 day, 1 week or until resumed.")
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if n := len([]rune(reason)); n > 255 {
		p.errorPage(w, r, http.StatusUnprocessableEntity, "The reason must be at most 255 characters long.")
		return
	} else if err := names.Check(reason); reason != "" && err != nil {
		p.errorPage(w, r, http.StatusUnprocessableEntity, "The reason "+err.Error()+".")
		return
	}
	c := &raftv1.PauseMonitor{Pause: true, Reason: reason}
	if d > 0 {
		c.UntilUnixMs = p.now().Add(d).UnixMilli()
	}
	p.pause(w, r, c)
}

// handleResume serves POST /monitors/{uuid}/resume.
func (p *Panel) handleResume(w http.ResponseWriter, r *http.Request) {
	p.pause(w, r, &raftv1.PauseMonitor{})
}

// pause proposes c for the account's {uuid} monitor and goes back to its
// page.
func (p *Panel) pause(w http.ResponseWriter, r *http.Request, c *raftv1.PauseMonitor) {
	s := sessionFrom(r.Context())
	m, ok := p.monitorOf(w, r)
	if !ok {
		return
	}
	c.AccountId, c.MonitorUuid = s.AccountID, m.GetUuid()
	if !p.apply(w, r, &raftv1.Command{Op: &raftv1.Command_PauseMonitor{PauseMonitor: c}}) {
		return
	}
	http.Redirect(w, r, "/monitors/"+m.GetUuid(), http.StatusSeeOther)
}
