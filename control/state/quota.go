package state

import (
	"errors"
	"time"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Quota states, as carried in raftv1.QuotaStatus.state and the
// X-Quota-State header.
const (
	QuotaOK        = "ok"
	QuotaWarning   = "warning"
	QuotaExceeded  = "exceeded"
	QuotaSuspended = "suspended"
)

// The monthly quota of an account. The period is the UTC calendar month; the
// counter resets lazily: a stored period older than the time asked about
// counts as zero, and the next counted event writes the new period. Counting
// uses the events' receipt time, so status and counting never read a clock.
//
// An event received "in the past" (a receiving node's clock behind another's
// across a month boundary) counts in the stored, later period: the period
// never goes back.

func quotaKey(accountID string) []byte { return k(prefixQuota, accountID) }

// getQuota reads an account's quota; an empty one when none is stored.
func getQuota(txn *badger.Txn, accountID string) (*statev1.Quota, error) {
	q := new(statev1.Quota)
	if err := getProto(txn, quotaKey(accountID), q); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return q, nil
}

// periodOf is the UTC month of ms as year*100+month.
func periodOf(ms int64) int64 {
	t := time.UnixMilli(ms).UTC()
	return int64(t.Year())*100 + int64(t.Month())
}

// periodEnd is the start of the month after period p, in ms.
func periodEnd(p int64) int64 {
	return time.Date(int(p/100), time.Month(p%100)+1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
}

// eventLimit is the plan's monthly event limit, if it has one.
func eventLimit(plan *raftv1.Plan) (int64, bool) {
	if plan == nil || plan.MonthlyEventLimit == nil {
		return 0, false
	}
	return *plan.MonthlyEventLimit, true
}

// monitorLimit is the plan's monitor limit, if it has one.
func monitorLimit(plan *raftv1.Plan) (int64, bool) {
	if plan == nil || plan.MonitorLimit == nil {
		return 0, false
	}
	return *plan.MonitorLimit, true
}

// quotaAt is the period, usage and exceeded time in effect at ms.
func quotaAt(q *statev1.Quota, ms int64) (period, used, exceeded int64) {
	if p := periodOf(ms); p > q.GetPeriod() {
		return p, 0, 0
	}
	return q.GetPeriod(), q.GetUsed(), q.GetExceededUnixMs()
}

// quotaStatus is the state of an account with plan and counter q at ms:
// without a monthly limit always ok; past the limit exceeded for the grace
// period after usage passed it, then suspended; from 80 percent warning.
// Usage past the limit with no exceeded time (the plan was changed, or a
// suspension was lifted by deleting a monitor) is exceeded: the grace
// period starts with the next counted event.
func quotaStatus(plan *raftv1.Plan, q *statev1.Quota, ms int64) *raftv1.QuotaStatus {
	period, used, exceeded := quotaAt(q, ms)
	st := &raftv1.QuotaStatus{State: QuotaOK, Used: used, ResetsAtUnixMs: periodEnd(period)}
	limit, ok := eventLimit(plan)
	if !ok {
		return st
	}
	st.Limit = &limit
	switch {
	case used > limit && exceeded != 0 && ms-exceeded >= plan.GetQuotaGraceSeconds()*1000:
		st.State = QuotaSuspended
	case used > limit:
		st.State = QuotaExceeded
	case used*5 >= limit*4:
		st.State = QuotaWarning
	}
	return st
}

// countEvent counts one stored event received at ms. When usage first
// passes the limit, the grace period starts at ms.
func countEvent(plan *raftv1.Plan, q *statev1.Quota, ms int64) {
	period, used, exceeded := quotaAt(q, ms)
	used++
	if limit, ok := eventLimit(plan); ok && used > limit && exceeded == 0 {
		exceeded = ms
	}
	q.Period, q.Used, q.ExceededUnixMs = period, used, exceeded
}

// quotaAfterPlanChange applies the plan rule of the quota at time now: an
// account no longer over its (new) limit resumes at once; one that is over
// a lowered limit starts its grace period now.
func quotaAfterPlanChange(txn *badger.Txn, accountID string, plan *raftv1.Plan, now int64) error {
	q, err := getQuota(txn, accountID)
	if err != nil {
		return err
	}
	_, used, exceeded := quotaAt(q, now)
	limit, ok := eventLimit(plan)
	over := ok && used > limit
	switch {
	case !over && q.GetExceededUnixMs() != 0:
		q.ExceededUnixMs = 0
	case over && exceeded == 0:
		q.ExceededUnixMs = now
	default:
		return nil
	}
	return setProto(txn, quotaKey(accountID), q)
}

// resumeIfSuspended lifts a quota suspension (the rule "suspended -> the
// account drops back under its monitor limit -> resumes"). The counter keeps
// its usage; clearing the exceeded time makes the account exceeded, and a
// new grace period starts with its next counted event.
func resumeIfSuspended(txn *badger.Txn, acct *statev1.Account, now int64) error {
	q, err := getQuota(txn, acct.GetId())
	if err != nil {
		return err
	}
	if quotaStatus(acct.GetPlan(), q, now).GetState() != QuotaSuspended {
		return nil
	}
	q.ExceededUnixMs = 0
	return setProto(txn, quotaKey(acct.GetId()), q)
}

// QuotaStatus is the quota of the account as of nowMs (the X-Quota-*
// headers of an answer that stored nothing use it).
func (s *Store) QuotaStatus(accountID string, nowMs int64) (*raftv1.QuotaStatus, error) {
	var st *raftv1.QuotaStatus
	err := s.view(func(txn *badger.Txn) error {
		var acct statev1.Account
		if err := getProto(txn, k(prefixAccount, accountID), &acct); err != nil {
			return err
		}
		q, err := getQuota(txn, accountID)
		if err != nil {
			return err
		}
		st = quotaStatus(acct.GetPlan(), q, nowMs)
		return nil
	})
	return st, err
}

// Usage is what the account uses of its plan as of nowMs: its monitors (all
// kinds) and the events counted in the current quota period.
func (s *Store) Usage(accountID string, nowMs int64) (monitors int64, eventsThisPeriod int64, err error) {
	err = s.view(func(txn *badger.Txn) error {
		if ok, err := exists(txn, k(prefixAccount, accountID)); err != nil {
			return err
		} else if !ok {
			return ErrNotFound
		}
		n, err := readUint64(txn, monitorCountKey(accountID))
		if err != nil {
			return err
		}
		q, err := getQuota(txn, accountID)
		if err != nil {
			return err
		}
		_, eventsThisPeriod, _ = quotaAt(q, nowMs)
		monitors = int64(n)
		return nil
	})
	return monitors, eventsThisPeriod, err
}
