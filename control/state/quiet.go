package state

import (
	"errors"
	"strings"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// The rules that decide which alerts are worth sending (decisions.md 12)
// share one mechanism, here:
//
//   - The truth: pingstate and checkAlerts decide a monitor's state and the
//     alert its change would raise, as before. QuietState.down_since says
//     whether it is down (noteDown), whatever was sent.
//   - One gate (gate): every alert of a monitor passes it before the
//     outbox. Closed, the alert is held: nothing is raised, the standing
//     alert (what was sent: a ping's alerting/last_alert, a check's
//     CheckStatus.alert) is left as it was, and QuietState.held_by names
//     what holds it. The gate is closed while the monitor is paused, while
//     a maintenance window matches it, or while a monitor it depends on is
//     down.
//   - One place that judges afresh (reopen): when the gate opens (resume,
//     a pause's until, a window's end, a dependency's recovery; the
//     leader's JudgeAfresh) the truth is compared with what was sent. Down
//     with nothing sent raises the failure alert once; up with a failure
//     sent raises the recovery. A ping monitor that missed a run (or timed
//     out) while paused or in a window is not alerted for it: its next run
//     is expected from the moment the gate opened (pingstate.Rebase).
//
// The state machine never reads the clock: every rule is judged at the
// command's time.

// What holds a monitor's alerts (QuietState.held_by).
const (
	HeldByPause       = "pause"
	HeldByMaintenance = "maintenance:" // + the window's id
	HeldByDependency  = "dependency:"  // + the monitor's uuid
)

// Bounds of the commands here.
const (
	// MaxJudgeAfresh bounds the monitors of one JudgeAfresh: each may
	// raise an alert with a delivery per channel, as many as one
	// RecordExecutions may.
	MaxJudgeAfresh = 16
	// MaxPauseReason bounds a pause's reason, in bytes.
	MaxPauseReason = 1024
	// MaxDependencies bounds a monitor's depends_on: the gate reads each
	// when an alert is about to be sent.
	MaxDependencies = 16
)

// quietOf returns m's quiet state, made when it has none.
func quietOf(m *statev1.Monitor) *statev1.QuietState {
	if m.Quiet == nil {
		m.Quiet = new(statev1.QuietState)
	}
	return m.Quiet
}

// gate tells what holds the alerts of m at the command's time ("" when
// nothing does): its pause, then a maintenance window that matches it, then
// a monitor it depends on that is down.
func gate(txn *badger.Txn, ctx applyCtx, m *statev1.Monitor) (string, error) {
	if m.GetQuiet().GetPaused() {
		return HeldByPause, nil
	}
	w, _, err := inWindow(txn, ctx.values, m, ctx.now)
	if err != nil || w != nil {
		return HeldByMaintenance + w.GetId(), err
	}
	dep, err := downDependency(txn, ctx.values, m)
	if err != nil || dep != nil {
		return HeldByDependency + dep.GetUuid(), err
	}
	return "", nil
}

// failureAlert tells whether typ opens a problem; recoveryAlert whether
// it closes one.
func failureAlert(typ string) bool {
	switch typ {
	case pingstate.AlertFailed, pingstate.AlertTimeout, pingstate.AlertMissed, AlertCheckFailed, AlertSSLAlert:
		return true
	}
	return false
}

func recoveryAlert(typ string) bool {
	return typ == pingstate.AlertRecovered || typ == AlertCheckRecovered
}

// noteDown records whether m is down, since atMs; it reports a change.
func noteDown(m *statev1.Monitor, down bool, atMs int64) bool {
	q := m.GetQuiet()
	switch {
	case down && q.GetDownSinceUnixMs() == 0:
		quietOf(m).DownSinceUnixMs = atMs
	case !down && q.GetDownSinceUnixMs() != 0:
		q.DownSinceUnixMs = 0
	default:
		return false
	}
	return true
}

// hold records that an alert of m is held by what.
func hold(m *statev1.Monitor, by string, nowMs int64) {
	q := quietOf(m)
	if q.HeldBy == "" {
		q.HeldSinceUnixMs = nowMs
	}
	q.HeldBy = by
}

// settle forgets what is held once the truth agrees with what was sent
// again (a held failure that recovered, a held recovery that failed
// again): nothing is left to tell. It reports a change.
func settle(m *statev1.Monitor, down, sent bool) bool {
	q := m.GetQuiet()
	if q.GetHeldBy() == "" || down != sent {
		return false
	}
	q.HeldBy, q.HeldSinceUnixMs = "", 0
	return true
}

// sendAlert raises alert typ of m into the outbox (the gate is open) and
// remembers the failure alert that stands.
func sendAlert(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, typ string, at int64, ev *statev1.StoredEvent, exec *raftv1.Execution, regions ...string) error {
	a, err := newAlert(txn, ctx, pos, m, typ, at, ev, exec, regions...)
	if err != nil {
		return err
	}
	switch q := m.GetQuiet(); {
	case failureAlert(typ):
		q = quietOf(m)
		q.AlertId, q.AlertedUnixMs, q.AlertDownSinceUnixMs = a.GetId(), ctx.now, cmpOr(q.GetDownSinceUnixMs(), at)
		remindFrom(m, ctx.now)
	case recoveryAlert(typ) && q.GetAlertId() != "":
		a.DownSinceUnixMs = q.GetAlertDownSinceUnixMs()
		down := max(at-a.DownSinceUnixMs, 0) / 1000
		a.DownSeconds = &down
		q.AlertId, q.AlertedUnixMs, q.AlertDownSinceUnixMs, q.NextReminderUnixMs = "", 0, 0, 0
	}
	return storeAlert(txn, ctx, a)
}

// cmpOr is a, or b when a is 0.
func cmpOr(a, b int64) int64 {
	if a == 0 {
		return b
	}
	return a
}

// The reminders of a failure alert that stands (decisions.md 12).
const (
	AlertMonitorReminder = "monitor.reminder"
	AlertCheckReminder   = "check.reminder"
)

// remindFrom schedules m's next reminder a period after nowMs, while a
// failure alert of it stands and it has a period; else none.
func remindFrom(m *statev1.Monitor, nowMs int64) {
	q := m.GetQuiet()
	switch {
	case q == nil:
	case q.GetAlertId() != "" && m.GetRemindEverySeconds() > 0:
		q.NextReminderUnixMs = nowMs + m.GetRemindEverySeconds()*1000
	default:
		q.NextReminderUnixMs = 0
	}
}

// remind sends the reminder of m that was due at its next_reminder (the
// command's time is past it), unless the monitor is no longer down (its
// recovery is held), disabled, its account suspended or its gate closed:
// a reminder is never held, only skipped. The next one is a period later.
func remind(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor) error {
	q := m.GetQuiet()
	due, period := q.GetNextReminderUnixMs(), m.GetRemindEverySeconds()*1000
	if period <= 0 || q.GetAlertId() == "" {
		q.NextReminderUnixMs = 0
		return nil
	}
	for q.NextReminderUnixMs <= ctx.now {
		q.NextReminderUnixMs += period
	}
	if q.GetDownSinceUnixMs() == 0 || !m.GetEnabled() {
		return nil
	}
	if by, err := gate(txn, ctx, m); err != nil || by != "" {
		return err
	}
	if muted, err := suspendedAt(txn, m.GetAccountId(), ctx.now); err != nil || muted {
		return err
	}
	typ := AlertCheckReminder
	if m.GetKind() == KindPing {
		typ = AlertMonitorReminder
	}
	a, err := newAlert(txn, ctx, pos, m, typ, due, nil, nil)
	if err != nil {
		return err
	}
	a.OriginalAlertId, a.DownSinceUnixMs = q.GetAlertId(), q.GetAlertDownSinceUnixMs()
	return storeAlert(txn, ctx, a)
}

// releasePing passes the alert pingstate decided for ping monitor m (its
// state going from prev to st, at atMs) through the gate: sent, or held
// with the standing alert left as it was. It returns the state to store
// and whether m's quiet state changed.
func releasePing(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, prev, st pingstate.State, alert string, atMs int64, ev *statev1.StoredEvent) (pingstate.State, bool, error) {
	changed := noteDown(m, pingstate.IsDown(st.State), atMs)
	if alert != "" {
		by, err := gate(txn, ctx, m)
		if err != nil {
			return st, false, err
		}
		if by != "" {
			st.Alerting, st.LastAlert = prev.Alerting, prev.LastAlert
			hold(m, by, ctx.now)
		} else {
			setPingState(m, st) // the alert tells the ping state it follows
			if err := sendAlert(txn, ctx, pos, m, alert, atMs, ev, nil); err != nil {
				return st, false, err
			}
		}
		changed = true
	}
	return st, settle(m, pingstate.IsDown(st.State), pingstate.SentFailure(st)) || changed, nil
}

// releaseCheck passes the alerts checkAlerts decided for check m (raise,
// with the standing alert they leave) through the gate: sent, with the
// standing alert recorded in cs, or held. It reports whether m's quiet
// state changed.
func releaseCheck(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, cs *statev1.CheckStatus, e *raftv1.Execution, raise []string, standing string, regions []string) (bool, error) {
	changed := false
	if len(raise) > 0 {
		by, err := gate(txn, ctx, m)
		if err != nil {
			return false, err
		}
		if by != "" {
			hold(m, by, ctx.now)
		} else {
			cs.Alert = standing
			for i, typ := range raise {
				var named []string
				if typ != AlertCheckRecovered && typ != AlertSSLWarning {
					named = regions
				}
				if err := sendAlert(txn, ctx, pos*2+i, m, typ, e.GetFinishedUnixMs(), nil, e, named...); err != nil {
					return false, err
				}
			}
		}
		changed = true
	}
	return settle(m, checkDown(m, cs), checkFailing(cs)) || changed, nil
}

// checkFailing tells whether a check's standing alert is a failure.
func checkFailing(cs *statev1.CheckStatus) bool {
	return cs.GetAlert() == AlertCheckFailed || cs.GetAlert() == AlertSSLAlert
}

// checkDown tells whether check m is down as the alert rules see it: its
// newest verdict failed, in at least failure_threshold consecutive slots.
func checkDown(m *statev1.Monitor, cs *statev1.CheckStatus) bool {
	return cs.GetVerdict() == ExecFailed && cs.GetFailedSlots() >= max(m.GetFailureThreshold(), 1)
}

// countSlot counts check verdict e in cs's run of consecutive failed
// slots: a failure of a new slot adds one, a success ends the run.
func countSlot(cs *statev1.CheckStatus, e *raftv1.Execution) {
	switch {
	case e.GetStatus() != ExecFailed:
		cs.FailedSlots, cs.FailedSlotUnixMs = 0, 0
	case e.GetSlotUnixMs() != cs.GetFailedSlotUnixMs():
		cs.FailedSlots++
		cs.FailedSlotUnixMs = e.GetSlotUnixMs()
	}
}

// belowThreshold drops a check's failure alert from raise while its run
// of failed slots is shorter than its failure_threshold: the standing
// alert stays as it was, and the next failed slot asks again.
func belowThreshold(m *statev1.Monitor, cs *statev1.CheckStatus, raise []string, standing string) ([]string, string) {
	if len(raise) == 1 && failureAlert(raise[0]) && !checkDown(m, cs) {
		return nil, cs.GetAlert()
	}
	return raise, standing
}

// judgeAfresh judges m again at the command's time, for the leader's
// JudgeAfresh: a reminder that is due is sent, a pause whose until passed
// ends, and a held alert whose gate opened is told. It reports whether m
// changed.
func judgeAfresh(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor) (bool, error) {
	q := m.GetQuiet()
	changed := false
	if due := q.GetNextReminderUnixMs(); due > 0 && ctx.now >= due {
		if err := remind(txn, ctx, pos, m); err != nil {
			return false, err
		}
		changed = true
	}
	if q.GetPaused() && q.GetPausedUntilUnixMs() > 0 && ctx.now >= q.GetPausedUntilUnixMs() {
		return true, resume(txn, ctx, pos, m)
	}
	reopened, err := reopen(txn, ctx, pos, m)
	return changed || reopened, err
}

// resume ends m's pause at the command's time and judges it afresh: a
// ping monitor expects its next run from now, and what was held is told.
func resume(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor) error {
	q := quietOf(m)
	q.Paused, q.PausedUntilUnixMs, q.PauseReason, q.PausedAtUnixMs = false, 0, "", 0
	if m.GetKind() == KindPing && m.GetEnabled() {
		st := PingState(m)
		setPingState(m, pingstate.Rebase(st, ctx.now, pingstate.SentFailure(st)))
	}
	_, err := reopen(txn, ctx, pos, m)
	return err
}

// reopen tells what an alert of m held meanwhile, once nothing holds it:
// the truth now against what was sent. It reports whether m changed.
func reopen(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor) (bool, error) {
	q := m.GetQuiet()
	was := q.GetHeldBy()
	if was == "" {
		return false, nil
	}
	by, err := gate(txn, ctx, m)
	if err != nil {
		return false, err
	}
	if by != "" {
		if by == was {
			return false, nil
		}
		q.HeldBy = by // held on by something else
		return true, nil
	}
	since := q.GetHeldSinceUnixMs()
	q.HeldBy, q.HeldSinceUnixMs = "", 0
	if !m.GetEnabled() {
		return true, nil
	}
	if muted, err := suspendedAt(txn, m.GetAccountId(), ctx.now); err != nil || muted {
		return true, err
	}
	if m.GetKind() == KindPing {
		return true, reopenPing(txn, ctx, pos, m, was, since)
	}
	return true, reopenCheck(txn, ctx, pos, m, since)
}

// timeGate tells whether what held an alert stops the clock of a ping
// monitor: paused or in maintenance, a job may well not have run; its
// next run is expected from the end instead of alerting missed.
func timeGate(by string) bool {
	return by == HeldByPause || strings.HasPrefix(by, HeldByMaintenance)
}

// reopenPing judges ping monitor m afresh after by held its alert since
// sinceMs.
func reopenPing(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, by string, sinceMs int64) error {
	st := PingState(m)
	down, sent := pingstate.IsDown(st.State), pingstate.SentFailure(st)
	switch {
	case down && !sent && st.State == pingstate.Down && timeGate(by):
		setPingState(m, pingstate.Rebase(st, ctx.now, false))
		return nil
	case down && !sent:
		typ := pingstate.AlertFailed
		if st.State == pingstate.Down {
			typ = pingstate.AlertMissed
			if st.TimeoutFired && st.RunStartMs > 0 {
				typ = pingstate.AlertTimeout
			}
		}
		st.Alerting, st.LastAlert = true, typ
		setPingState(m, st)
		return sendAlert(txn, ctx, pos, m, typ, sinceMs, nil, nil)
	case !down && sent:
		st.Alerting, st.LastAlert = false, pingstate.AlertRecovered
		setPingState(m, st)
		return sendAlert(txn, ctx, pos, m, pingstate.AlertRecovered, ctx.now, nil, nil)
	}
	return nil
}

// reopenCheck judges check m afresh after its alert was held since
// sinceMs: still failing alerts once (with its newest verdict's
// execution), recovered from a failure that was sent alerts the recovery.
func reopenCheck(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, sinceMs int64) error {
	cs, err := getCheckStatus(txn, ctx.values, m.GetUuid())
	if err != nil {
		return err
	}
	down, sent := checkDown(m, cs), checkFailing(cs)
	switch {
	case down && !sent:
		e, regions, err := verdictExecution(txn, m, cs)
		if err != nil {
			return err
		}
		typ := AlertCheckFailed
		if m.GetKind() == KindSSLCheck && e.GetSsl() != nil {
			typ = AlertSSLAlert
		}
		cs.Alert = typ
		if err := sendAlert(txn, ctx, pos, m, typ, sinceMs, nil, e, regions...); err != nil {
			return err
		}
	case !down && sent:
		cs.Alert = ""
		if err := sendAlert(txn, ctx, pos, m, AlertCheckRecovered, ctx.now, nil, nil); err != nil {
			return err
		}
	default:
		return nil
	}
	return putCheckStatus(txn, ctx.values, m.GetUuid(), cs)
}

// verdictExecution reads the execution behind check m's newest verdict
// (nil when it is gone), and for a check with regions the regions that saw
// it fail.
func verdictExecution(txn *badger.Txn, m *statev1.Monitor, cs *statev1.CheckStatus) (*raftv1.Execution, []string, error) {
	region := RegionControl
	var regions []string
	if len(m.GetRegions()) > 0 {
		failed, err := failedRegions(txn, m, cs.GetVerdictSlotUnixMs())
		if err != nil || len(failed) == 0 {
			return nil, nil, err
		}
		region, regions = failed[0], failed
	}
	e := new(raftv1.Execution)
	err := getProto(txn, executionKey(m.GetUuid(), cs.GetVerdictSlotUnixMs(), region), e)
	if errors.Is(err, ErrNotFound) {
		return nil, regions, nil
	}
	return e, regions, err
}

// applyPauseMonitor pauses a monitor (its alerts held until it is resumed
// or until_unix_ms passes) or resumes it (judged afresh at once). Pausing
// a paused monitor replaces its until and reason; resuming one that is not
// paused changes nothing. Neither touches the manifest.
func applyPauseMonitor(txn *badger.Txn, ctx applyCtx, c *raftv1.PauseMonitor) (*raftv1.Result, error) {
	if len(c.GetReason()) > MaxPauseReason {
		return invalid("pause: a reason of %d bytes, at most %d", len(c.GetReason()), MaxPauseReason), nil
	}
	m, err := getMonitorIn(txn, ctx.values, c.GetMonitorUuid())
	if errors.Is(err, ErrNotFound) || (err == nil && m.GetAccountId() != c.GetAccountId()) {
		return notFound("monitor %s not found", c.GetMonitorUuid()), nil
	}
	if err != nil {
		return nil, err
	}
	uptime, err := uptimeBracket(txn, ctx.values, m)
	if err != nil {
		return nil, err
	}
	q := m.GetQuiet()
	switch {
	case c.GetPause():
		q = quietOf(m)
		if !q.Paused {
			q.PausedAtUnixMs = ctx.now
		}
		q.Paused, q.PausedUntilUnixMs, q.PauseReason = true, c.GetUntilUnixMs(), c.GetReason()
	case !q.GetPaused():
		return ok(), nil
	default:
		if err := resume(txn, ctx, 0, m); err != nil {
			return nil, err
		}
	}
	// A paused monitor's time is not counted in its uptime.
	if err := uptime(txn, ctx); err != nil {
		return nil, err
	}
	return ok(), putMonitorIn(txn, ctx.values, m)
}

// uptimeBracket notes what m's time counts as in its uptime before a
// change of its quiet state; the function it returns records the change
// that made, at the command's time.
func uptimeBracket(txn *badger.Txn, values *valueCache, m *statev1.Monitor) (func(*badger.Txn, applyCtx) error, error) {
	verdict := ""
	if m.GetKind() != KindPing {
		cs, err := getCheckStatus(txn, values, m.GetUuid())
		if err != nil {
			return nil, err
		}
		verdict = cs.GetVerdict()
	}
	c := beforeChange(m, verdict)
	return func(txn *badger.Txn, ctx applyCtx) error {
		return c.after(txn, ctx, verdict, ctx.now)
	}, nil
}

// applyJudgeAfresh judges the listed monitors again (judgeAfresh); one
// that is gone, or has nothing due, is left alone. The result is stale
// when it changed nothing.
func applyJudgeAfresh(txn *badger.Txn, ctx applyCtx, c *raftv1.JudgeAfresh) (*raftv1.Result, error) {
	if n := len(c.GetMonitorUuids()); n == 0 || n > MaxJudgeAfresh {
		return invalid("judge afresh: 1 to %d monitors", MaxJudgeAfresh), nil
	}
	changed := false
	for i, id := range c.GetMonitorUuids() {
		m, err := getMonitorIn(txn, ctx.values, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		uptime, err := uptimeBracket(txn, ctx.values, m)
		if err != nil {
			return nil, err
		}
		c, err := judgeAfresh(txn, ctx, i, m)
		if err != nil {
			return nil, err
		}
		if err := uptime(txn, ctx); err != nil { // a pause that ended
			return nil, err
		}
		if c {
			if err := putMonitorIn(txn, ctx.values, m); err != nil {
				return nil, err
			}
			changed = true
		}
	}
	if !changed {
		return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Stale: true, Message: "nothing due"}, nil
	}
	return ok(), nil
}
