package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// After the service itself was down (decisions.md 12): every leader marks
// itself alive through raft (MarkAlive) when its term starts and every few
// seconds after. A term that starts more than the command's
// outage_after_ms after the last mark is the end of an outage, from that
// mark to the term's start: a whole cluster stopped and started again, or
// no quorum for that long, when nobody could reach the service. A ping
// monitor deadline that fell in it restarts from its end (applyFireDeadline
// rebases instead of alerting): a job that ran meanwhile could not have
// pinged. A normal failover, far shorter, loses nothing: its deadlines fire
// late, as before.

var keyAlive = []byte("meta:alive")

// MaxOutages is how many outages the state remembers: a deadline is
// rebased once, right after its outage, so only the newest few matter.
const MaxOutages = 8

// MinOutageAfter bounds MarkAlive's outage_after_ms from below: a gap
// that short is a failover, not an outage.
const MinOutageAfter = 10_000

// getLife reads meta:alive (empty when there is none).
func getLife(txn *badger.Txn) (*statev1.ServiceLife, error) {
	l := new(statev1.ServiceLife)
	if err := getProto(txn, keyAlive, l); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return l, nil
}

// applyMarkAlive records a leader alive at the command's time, and the
// outage a term start ends.
func applyMarkAlive(txn *badger.Txn, ctx applyCtx, c *raftv1.MarkAlive) (*raftv1.Result, error) {
	if c.GetTermStart() && c.GetOutageAfterMs() < MinOutageAfter {
		return invalid("mark alive: outage_after_ms %d, at least %d", c.GetOutageAfterMs(), MinOutageAfter), nil
	}
	l, err := getLife(txn)
	if err != nil {
		return nil, err
	}
	if last := l.GetAliveUnixMs(); c.GetTermStart() && last > 0 && ctx.now-last > c.GetOutageAfterMs() {
		l.Outages = append(l.Outages, &statev1.Outage{FromUnixMs: last, ToUnixMs: ctx.now})
		if n := len(l.Outages); n > MaxOutages {
			l.Outages = l.Outages[n-MaxOutages:]
		}
	}
	l.AliveUnixMs = max(l.GetAliveUnixMs(), ctx.now)
	return ok(), setProto(txn, keyAlive, l)
}

// outageOf returns the end of the outage in which a deadline due at dueMs
// fell (0: none).
func outageOf(txn *badger.Txn, dueMs int64) (int64, error) {
	l, err := getLife(txn)
	if err != nil {
		return 0, err
	}
	for _, o := range l.GetOutages() {
		if dueMs > o.GetFromUnixMs() && dueMs <= o.GetToUnixMs() {
			return o.GetToUnixMs(), nil
		}
	}
	return 0, nil
}

// ServiceLife returns when a leader was last alive and the last outages.
func (s *Store) ServiceLife() (*statev1.ServiceLife, error) {
	var l *statev1.ServiceLife
	err := s.view(func(txn *badger.Txn) error {
		var err error
		l, err = getLife(txn)
		return err
	})
	return l, err
}

// rebaseAfterOutage applies a deadline of m that fell in an outage ending
// at endMs: if it is still the monitor's, its next run is expected from
// endMs (and an open run's timeout counts from then), with no alert and no
// missed event. Stale otherwise.
func rebaseAfterOutage(txn *badger.Txn, ctx applyCtx, m *statev1.Monitor, c *raftv1.FireDeadline, endMs int64) (*raftv1.Result, error) {
	st := PingState(m)
	timeout, late, missed := pingstate.Deadlines(PingSettings(m), st)
	if due := c.GetDueUnixMs(); due != map[string]int64{pingstate.DeadlineTimeout: timeout, pingstate.DeadlineLate: late, pingstate.DeadlineMissed: missed}[c.GetKind()] || due == 0 {
		return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Stale: true, Message: "stale"}, nil
	}
	st.BaseMs = max(st.BaseMs, endMs)
	setPingState(m, st)
	return ok(), putMonitorIn(txn, ctx.values, m)
}
