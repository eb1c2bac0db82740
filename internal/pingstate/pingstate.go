// Package pingstate is the state machine of a ping monitor: what each event
// and each passed deadline does to the monitor, and which alert it raises.
// It is pure (no clock, no I/O) so the replicated state machine can apply it
// deterministically to events, and the leader's deadline engine can apply
// it to deadlines it proposes through raft: one set of rules for both.
//
// States: new (no ping yet), up, running (a run is open), late (the
// expected ping is overdue but within its grace time), down (a run passed
// its timeout, or the expected ping did not come within interval + grace),
// failed (the last run failed), paused (disabled: at once, and judged
// afresh when enabled again, SetEnabled). Alerts: one per change of state,
// never one per event:
//
//   - fail -> failed; alert monitor.failed unless already failed.
//   - a run open longer than the timeout -> down; alert monitor.timeout.
//     The run stays open: a later complete closes it and recovers.
//   - complete slower than the timeout -> up; alert monitor.slow (not again
//     for the next slow run while no good run came between).
//   - no ping within the interval of the last one (or, on a schedule, by the
//     schedule's first time after it) -> late (no alert; only when there is
//     a grace time); by then + grace -> down; alert monitor.missed (the
//     expected execution is missed).
//   - the next good complete after any alert -> up; alert monitor.recovered.
//   - skip counts as a ping for the missed deadline and never alerts.
//   - a disabled monitor (paused) and a suspended account never alert.
//   - Rebase judges the monitor afresh at a time: its next run is expected
//     from then, as if it had pinged, and an open run's timeout counts
//     from then (control/state/quiet.go: a pause or a maintenance window
//     ended, the service came back after an outage).
package pingstate

// States.
const (
	New     = "new"
	Up      = "up"
	Running = "running"
	Late    = "late"
	Down    = "down"
	Failed  = "failed"
	Paused  = "paused"
)

// Alerts, the type of the alert raised.
const (
	AlertFailed    = "monitor.failed"
	AlertTimeout   = "monitor.timeout"
	AlertSlow      = "monitor.slow"
	AlertMissed    = "monitor.missed"
	AlertRecovered = "monitor.recovered"
)

// Deadline kinds.
const (
	DeadlineTimeout = "timeout"
	DeadlineLate    = "late"
	DeadlineMissed  = "missed"
)

// Settings are the monitor's manifest fields that matter here.
type Settings struct {
	Enabled bool
	// TimeoutMs is the longest a run may take.
	TimeoutMs int64
	// IntervalMs is the expected time between pings (0: none expected);
	// GraceMs is added to it before a ping counts as missed.
	IntervalMs int64
	GraceMs    int64
	// Expect, when set, replaces IntervalMs: the time the next run is
	// expected after a ping at lastMs (a schedule's next time; 0: none). It
	// must be a pure function of its argument, as everything here is.
	Expect func(lastMs int64) int64
}

// ExpectedAfter is when the next run is expected after a ping at lastMs (0:
// none is expected).
func (s Settings) ExpectedAfter(lastMs int64) int64 {
	switch {
	case s.Expect != nil:
		return s.Expect(lastMs)
	case s.IntervalMs > 0:
		return lastMs + s.IntervalMs
	}
	return 0
}

// State is what the machine remembers of a monitor.
type State struct {
	State string
	// Alerting: an alert was raised and no recovery yet.
	Alerting bool
	// LastPingMs is the event time of the newest ping (any status).
	LastPingMs int64
	// RunStartMs is when the open run started (0: none open).
	RunStartMs int64
	// TimeoutFired: the open run's timeout already alerted.
	TimeoutFired bool
	// LateFired: the current late deadline already passed.
	LateFired bool
	// MissedFired: the current missed deadline already alerted.
	MissedFired bool
	// LastDurationMs is the duration of the last closed run.
	LastDurationMs int64
	// LastAlert is the last alert raised.
	LastAlert string
	// BaseMs, when after LastPingMs, is when the monitor was judged afresh
	// (resumed, a maintenance window ended, the service came back after an
	// outage): its next run is expected from then, and an open run's
	// timeout counts from then.
	BaseMs int64
}

// Ping is one ping event: status run, complete, fail or skip, at AtMs (the
// event's time); DurationMs is the run's duration when known (sent, or
// computed from the paired run), -1 when not.
type Ping struct {
	Status     string
	AtMs       int64
	DurationMs int64
}

// Muted tells the machine that alerts must not be raised (a suspended
// account): states still change.
type Muted bool

// OnPing applies a ping and returns the new state and the alert to raise
// ("" for none).
func OnPing(s Settings, st State, p Ping, muted Muted) (State, string) {
	if p.AtMs > st.LastPingMs {
		st.LastPingMs = p.AtMs
	}
	if st.BaseMs != 0 && st.LastPingMs >= st.BaseMs {
		st.BaseMs = 0 // the ping is newer: it counts
	}
	st.LateFired, st.MissedFired = false, false
	if !s.Enabled {
		st.State = Paused
		st.RunStartMs, st.TimeoutFired = openRun(st, p)
		return st, ""
	}
	alert := ""
	switch p.Status {
	case "run":
		if st.RunStartMs == 0 {
			st.RunStartMs, st.TimeoutFired = p.AtMs, false
		}
		if st.State != Failed && st.State != Down {
			st.State = Running
		}
	case "complete":
		timedOut := st.TimeoutFired
		st.RunStartMs, st.TimeoutFired = 0, false
		if p.DurationMs >= 0 {
			st.LastDurationMs = p.DurationMs
		}
		slow := p.DurationMs >= 0 && s.TimeoutMs > 0 && p.DurationMs > s.TimeoutMs
		switch {
		case slow && !timedOut:
			// A slow run right after another slow run is the same state.
			if !(st.Alerting && st.LastAlert == AlertSlow) {
				alert = AlertSlow
			}
			st.Alerting = true
		case st.Alerting:
			// Also the late complete of a run that timed out: it closes
			// the run and recovers.
			alert, st.Alerting = AlertRecovered, false
		}
		st.State = Up
	case "fail":
		st.RunStartMs, st.TimeoutFired = 0, false
		if p.DurationMs >= 0 {
			st.LastDurationMs = p.DurationMs
		}
		if st.State != Failed {
			alert = AlertFailed
		}
		st.State, st.Alerting = Failed, true
	case "skip":
		if st.State == New || st.State == Late {
			st.State = Up
		}
	}
	return raise(st, alert, muted)
}

// raise records alert as the last one unless muted, and returns it.
func raise(st State, alert string, muted Muted) (State, string) {
	if muted || alert == "" {
		return st, ""
	}
	st.LastAlert = alert
	return st, alert
}

// openRun keeps the run bookkeeping of a paused monitor, so enabling it
// again starts from the truth.
func openRun(st State, p Ping) (int64, bool) {
	switch p.Status {
	case "run":
		if st.RunStartMs == 0 {
			return p.AtMs, false
		}
	case "complete", "fail":
		return 0, false
	}
	return st.RunStartMs, st.TimeoutFired
}

// Deadlines returns the monitor's next deadlines (0 for none): what the
// leader's engine waits for. late is only set when there is a grace time
// (without one, late and missed are the same moment). They count from the
// last ping and the open run's start, or from BaseMs when it is later.
func Deadlines(s Settings, st State) (timeoutMs, lateMs, missedMs int64) {
	if !s.Enabled {
		return 0, 0, 0
	}
	if st.RunStartMs > 0 && !st.TimeoutFired && s.TimeoutMs > 0 {
		timeoutMs = max(st.RunStartMs, st.BaseMs) + s.TimeoutMs
	}
	if st.LastPingMs > 0 && !st.MissedFired {
		if expected := s.ExpectedAfter(max(st.LastPingMs, st.BaseMs)); expected > 0 {
			missedMs = expected + s.GraceMs
			if s.GraceMs > 0 && !st.LateFired {
				lateMs = expected
			}
		}
	}
	return timeoutMs, lateMs, missedMs
}

// SetEnabled is what switching the monitor's enabled flag does, at nowMs:
// disabled, it is paused at once (its pings are still recorded, and its
// deadlines are not judged: Deadlines has none); enabled again, it is
// judged afresh from nowMs: new when it never had a ping, else up, with
// no alert pending (a failure before the pause does not recover, nor
// alert again) and its next deadlines counted from nowMs.
func SetEnabled(st State, enabled bool, nowMs int64) State {
	if !enabled {
		st.State = Paused
		return st
	}
	if st.State != Paused {
		return st
	}
	st.State = Up
	if st.LastPingMs == 0 {
		st.State = New
	}
	if st.RunStartMs > 0 {
		st.State = Running
	}
	st.Alerting, st.TimeoutFired, st.LateFired, st.MissedFired = false, false, false, false
	st.BaseMs = max(st.BaseMs, nowMs)
	return st
}

// Earliest is the earliest of the deadlines that are set (not 0), or 0
// when none is.
func Earliest(deadlines ...int64) int64 {
	out := int64(0)
	for _, d := range deadlines {
		if d != 0 && (out == 0 || d < out) {
			out = d
		}
	}
	return out
}

// OnDeadline applies a deadline of kind that was due at dueMs, as decided
// at nowMs (>= dueMs). A deadline that is no longer the monitor's (a ping
// moved it, or it fired already) changes nothing, so proposing one twice,
// or after a newer ping, is harmless.
func OnDeadline(s Settings, st State, kind string, dueMs, nowMs int64, muted Muted) (State, string) {
	timeoutMs, lateMs, missedMs := Deadlines(s, st)
	if nowMs < dueMs {
		return st, ""
	}
	alert := ""
	switch {
	case kind == DeadlineTimeout && timeoutMs != 0 && timeoutMs == dueMs:
		st.TimeoutFired = true
		alert = AlertTimeout
	case kind == DeadlineMissed && missedMs != 0 && missedMs == dueMs:
		st.MissedFired = true
		alert = AlertMissed
	case kind == DeadlineLate && lateMs != 0 && lateMs == dueMs:
		// Overdue, within the grace time: shown, not alerted.
		st.LateFired = true
		if st.State == Up || st.State == Running || st.State == New {
			st.State = Late
		}
		return st, ""
	default:
		return st, ""
	}
	st.State, st.Alerting = Down, true
	return raise(st, alert, muted)
}

// Rebase judges the monitor afresh at atMs: its next run is expected from
// then and an open run's timeout counts from then. When no failure alert
// stands (sent is false), a missed or timed-out deadline that already
// fired is armed again, so it fires from the new base; the state is left
// as it is (a monitor that missed a run stays down until it pings).
func Rebase(st State, atMs int64, sent bool) State {
	if atMs > st.BaseMs {
		st.BaseMs = atMs
	}
	if !sent {
		st.MissedFired, st.LateFired, st.TimeoutFired = false, false, false
	}
	return st
}

// SentFailure tells whether a failure alert (failed, timed out, missed)
// was sent and no recovery yet.
func SentFailure(st State) bool {
	return st.Alerting && (st.LastAlert == AlertFailed || st.LastAlert == AlertTimeout || st.LastAlert == AlertMissed)
}

// IsDown tells whether a state is a failure: down (missed, timed out) or
// failed.
func IsDown(state string) bool { return state == Down || state == Failed }
