package state

import (
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
	"lookout/internal/schedule"
)

// PingSettings are the monitor's settings as internal/pingstate takes them.
// A monitor with a schedule expects its next run at the schedule's first
// time after its last ping; the schedule is parsed only when a deadline is
// asked for (a ping alone needs none).
func PingSettings(m *statev1.Monitor) pingstate.Settings {
	s := pingstate.Settings{
		Enabled:    m.GetEnabled(),
		TimeoutMs:  m.GetTimeoutSeconds() * 1000,
		IntervalMs: m.GetExpectedIntervalSeconds() * 1000,
		GraceMs:    m.GetGraceSeconds() * 1000,
	}
	if spec, zone := m.GetSchedule(), m.GetTimezone(); spec != "" {
		s.IntervalMs = 0
		s.Expect = func(lastMs int64) int64 {
			sc, err := schedule.ParseIn(spec, zone)
			if err != nil {
				return 0 // validated when stored: cannot happen
			}
			return unixMs(sc.ExpectedAfter(time.UnixMilli(lastMs)))
		}
	}
	return s
}

// PingSchedule returns the schedule of a ping monitor that has one.
func PingSchedule(m *statev1.Monitor) (schedule.Schedule, bool) {
	if m.GetKind() != KindPing || m.GetSchedule() == "" {
		return schedule.Schedule{}, false
	}
	sc, err := schedule.ParseIn(m.GetSchedule(), m.GetTimezone())
	return sc, err == nil
}

// NextExpected is when an enabled ping monitor expects its next run,
// without grace (0: none is expected): after the last ping (or the time it
// was judged afresh, when later), the schedule's first time after it or
// that time plus the interval; before the first ping, a scheduled
// monitor's first time after it was created (it does not alert before its
// first ping all the same).
func NextExpected(m *statev1.Monitor) int64 {
	if m.GetKind() != KindPing || !m.GetEnabled() {
		return 0
	}
	st := PingState(m)
	last := st.LastPingMs
	if last > 0 {
		last = max(last, st.BaseMs)
	}
	if last == 0 && m.GetSchedule() != "" {
		last = m.GetCreatedUnixMs()
	}
	if last == 0 {
		return 0
	}
	return PingSettings(m).ExpectedAfter(last)
}

// unixMs is t in Unix ms, 0 for the zero time.
func unixMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// PingState is the monitor's engine state as internal/pingstate takes it.
func PingState(m *statev1.Monitor) pingstate.State {
	e := m.GetEngine()
	if e == nil {
		return pingstate.State{State: pingstate.New}
	}
	return pingstate.State{
		State: e.GetState(), Alerting: e.GetAlerting(), LastPingMs: e.GetLastPingUnixMs(),
		RunStartMs: e.GetRunStartUnixMs(), TimeoutFired: e.GetTimeoutFired(), LateFired: e.GetLateFired(), MissedFired: e.GetMissedFired(),
		LastDurationMs: e.GetLastDurationMs(), LastAlert: e.GetLastAlert(), BaseMs: e.GetBaseUnixMs(),
	}
}

// setPingState stores st in m; it reports whether anything changed.
func setPingState(m *statev1.Monitor, st pingstate.State) bool {
	if PingState(m) == st {
		return false
	}
	if m.Engine == nil {
		m.Engine = new(statev1.EngineState)
	}
	e := m.Engine // updated in place: this runs for every ping
	e.State, e.Alerting, e.LastPingUnixMs, e.RunStartUnixMs = st.State, st.Alerting, st.LastPingMs, st.RunStartMs
	e.TimeoutFired, e.LateFired, e.MissedFired = st.TimeoutFired, st.LateFired, st.MissedFired
	e.LastDurationMs, e.LastAlert, e.BaseUnixMs = st.LastDurationMs, st.LastAlert, st.BaseMs
	return true
}

// onPing runs the state machine for a stored ping event of m and raises
// its alert. It reports whether m changed.
func onPing(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, se *statev1.StoredEvent) (bool, error) {
	ev := se.GetEvent()
	if m.GetKind() != KindPing || ev.GetEventType() != "ping" {
		return false, nil
	}
	dur := int64(-1)
	if se.Duration != nil {
		dur = int64(se.GetDuration() * 1000)
	}
	prev := PingState(m)
	st, alert := pingstate.OnPing(PingSettings(m), prev, pingstate.Ping{Status: ev.GetStatus(), AtMs: se.GetEventTimeUnixMs(), DurationMs: dur}, false)
	st, quiet, err := releasePing(txn, ctx, pos, m, prev, st, alert, se.GetEventTimeUnixMs(), se)
	if err != nil {
		return false, err
	}
	return setPingState(m, st) || quiet, nil
}

// applyFireDeadline applies a deadline the leader saw pass. A deadline that
// is no longer the monitor's (a ping moved it, it fired already, the
// monitor is gone or disabled) changes nothing: the result says so, and
// the engine drops it. A suspended account's monitor changes state but
// raises no alert; the alert of one the gate holds (quiet.go) is held.
func applyFireDeadline(txn *badger.Txn, ctx applyCtx, c *raftv1.FireDeadline) (*raftv1.Result, error) {
	m, err := getMonitorIn(txn, ctx.values, c.GetMonitorUuid())
	if errors.Is(err, ErrNotFound) || (err == nil && m.GetAccountId() != c.GetAccountId()) {
		return notFound("monitor %s not found", c.GetMonitorUuid()), nil
	}
	if err != nil {
		return nil, err
	}
	// The monitor's newest ping came through a region the leader declared
	// offline: it is unknown, not missed; the leader judges it again when
	// the region is back.
	if r := m.GetPing().GetLastRegion(); r != "" {
		off, err := regionOffline(txn, r)
		if err != nil {
			return nil, err
		}
		if off {
			return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Stale: true, Message: "region offline"}, nil
		}
	}
	// The deadline fell while the whole service was down: it restarts from
	// the outage's end (outage.go).
	if end, err := outageOf(txn, c.GetDueUnixMs()); err != nil || end > 0 {
		if err != nil {
			return nil, err
		}
		return rebaseAfterOutage(txn, ctx, m, c, end)
	}
	muted, err := suspendedAt(txn, m.GetAccountId(), ctx.now)
	if err != nil {
		return nil, err
	}
	prev := PingState(m)
	st, alert := pingstate.OnDeadline(PingSettings(m), prev, c.GetKind(), c.GetDueUnixMs(), ctx.now, pingstate.Muted(muted))
	if st == prev {
		return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Stale: true, Message: "stale"}, nil
	}
	uptime := beforeChange(m, "")
	var missed *statev1.StoredEvent
	if st.MissedFired && c.GetKind() == pingstate.DeadlineMissed {
		if missed, err = recordMissed(txn, ctx, m, c.GetDueUnixMs()); err != nil {
			return nil, err
		}
	}
	if st, _, err = releasePing(txn, ctx, 0, m, prev, st, alert, c.GetDueUnixMs(), missed); err != nil {
		return nil, err
	}
	setPingState(m, st)
	// Down (or late) from when the deadline passed.
	if err := uptime.after(txn, ctx, "", c.GetDueUnixMs()); err != nil {
		return nil, err
	}
	return ok(), putMonitorIn(txn, ctx.values, m)
}

// MaxFireDeadlines bounds the deadlines of one FireDeadlines: each may
// raise an alert with a delivery per channel, as many as one JudgeAfresh
// may.
const MaxFireDeadlines = MaxJudgeAfresh

// applyFireDeadlines applies deadlines in order, each as applyFireDeadline
// would alone (applyEach).
func applyFireDeadlines(txn *badger.Txn, ctx applyCtx, c *raftv1.FireDeadlines) (*raftv1.Result, error) {
	return applyEach(txn, ctx, "fire deadlines", c.GetDeadlines(), MaxFireDeadlines, applyFireDeadline)
}

// recordMissed adds the expected run that did not come to the monitor's
// history: an event of type "missed" at the deadline, received when the
// deadline fired. It is not counted in the quota (nobody sent it).
func recordMissed(txn *badger.Txn, ctx applyCtx, m *statev1.Monitor, dueMs int64) (*statev1.StoredEvent, error) {
	if m.Ping == nil {
		m.Ping = &statev1.PingState{}
	}
	p := m.Ping
	seq := p.NextSeq
	p.NextSeq++
	p.Events++
	se := &statev1.StoredEvent{
		Seq:             seq,
		Event:           &raftv1.Event{AccountId: m.GetAccountId(), Monitor: m.GetName(), EventType: EventMissed, ReceivedUnixMs: ctx.now},
		EventTimeUnixMs: dueMs,
		Color:           ColorRed,
	}
	key := eventKey(m.GetUuid(), seq)
	if err := setProto(txn, key, se); err != nil {
		return nil, err
	}
	ctx.values.eventStored(txn, key)
	return se, fileEvent(txn, p, m.GetUuid(), seq, ctx.now)
}

// EventMissed is the event type of an expected run that did not come.
const EventMissed = "missed"

// suspendedAt tells whether the account's quota is suspended at nowMs.
func suspendedAt(txn *badger.Txn, accountID string, nowMs int64) (bool, error) {
	var acct statev1.Account
	if err := getProto(txn, k(prefixAccount, accountID), &acct); err != nil {
		return false, err
	}
	q, err := getQuota(txn, accountID)
	if err != nil {
		return false, err
	}
	return quotaStatus(acct.GetPlan(), q, nowMs).GetState() == QuotaSuspended, nil
}

// PingMonitors calls fn for every ping monitor of every account (the
// deadline engine's rebuild).
func (s *Store) PingMonitors(fn func(*statev1.Monitor) error) error {
	return s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixMonitor, func() *statev1.Monitor { return new(statev1.Monitor) }, func(m *statev1.Monitor) error {
			if m.GetKind() != KindPing {
				return nil
			}
			return fn(m)
		})
	})
}

// MonitorByUUID returns a monitor of any account (the engines' reads).
func (s *Store) MonitorByUUID(id string) (*statev1.Monitor, error) {
	var m *statev1.Monitor
	err := s.view(func(txn *badger.Txn) error {
		var err error
		m, err = getMonitor(txn, id)
		return err
	})
	return m, err
}
