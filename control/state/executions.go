package state

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/internal/checkrun"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/schedule"
)

// Execution statuses; success and failed are final. Every
// runner of a check (control/checks, agent/runner) uses internal/checkrun's.
const (
	ExecPending  = "pending"
	ExecRunning  = checkrun.StatusRunning
	ExecRetrying = checkrun.StatusRetrying
	ExecSuccess  = checkrun.StatusSuccess
	ExecFailed   = checkrun.StatusFailed
)

// RegionControl is the region of executions the control plane ran.
const RegionControl = "control"

// DefaultExecutionRetention is how many executions are kept per check when
// a RecordExecutions command does not say.
const DefaultExecutionRetention = 1000

// MaxExecutionRetention bounds a RecordExecutions' retention count (and so
// what deleting a check deletes in one entry).
const MaxExecutionRetention = 10_000

// Bounds of a RecordExecutions command. With them one execution encodes
// to at most about 11 KiB (SSL and DNS details both at their bounds) and a
// whole command to about 170 KiB, under MaxCommandBytes.
const (
	MaxExecutionsPerCommand = 16
	MaxExecutionError       = checkrun.MaxError    // bytes of error
	MaxExecutionText        = checkrun.MaxText     // bytes of issuer, subject
	MaxExecutionDNSNames    = checkrun.MaxDNSNames // entries of dns_names
	MaxExecutionDNSName     = checkrun.MaxDNSName  // bytes of one DNS name
	MaxExecutionLabel       = checkrun.MaxLabel    // bytes of region, agent, error_kind
	MaxExecutionAnswers     = checkrun.MaxAnswers  // entries of dns answers
	MaxExecutionAnswer      = checkrun.MaxAnswer   // bytes of one dns answer
)

// executionTrimSlack is the retention work a command may do beyond one
// deletion per execution (to catch up after the retention was lowered).
const executionTrimSlack = 100

// ErrorInterrupted is the error_kind of an execution a new leader closed
// because the runner that started it stopped (the former leader died, or
// its verdict could not be recorded) before judging the target: it is
// failed so that it is final, but it is no verdict on the target (see
// Interrupted).
const ErrorInterrupted = "interrupted"

// LeaderSchedule returns the schedule of m when the control plane's leader
// runs it: an enabled check without regions (agents run those) whose
// schedule parses. The scheduler follows it and the API shows its next run.
func LeaderSchedule(m *statev1.Monitor) (schedule.Schedule, bool) {
	if m.GetKind() == KindPing || !m.GetEnabled() || len(m.GetRegions()) > 0 {
		return schedule.Schedule{}, false
	}
	sc, err := schedule.ParseIn(m.GetSchedule(), m.GetTimezone())
	return sc, err == nil
}

// FinalStatus tells whether an execution status is final: success or
// failed (never changed once stored). A final execution is a verdict on
// the target unless it is Interrupted.
func FinalStatus(s string) bool { return s == ExecSuccess || s == ExecFailed }

// Interrupted tells whether e was closed without judging its target: it
// moves neither the check's up/down state nor its alerts.
func Interrupted(e *raftv1.Execution) bool {
	return e.GetStatus() == ExecFailed && e.GetErrorKind() == ErrorInterrupted
}

func knownExecStatus(s string) bool {
	switch s {
	case ExecPending, ExecRunning, ExecRetrying, ExecSuccess, ExecFailed:
		return true
	}
	return false
}

func executionKey(check string, slotMs int64, region string) []byte {
	b := k(prefixExecution, check, "")
	b = append(b, u64(uint64(slotMs))...)
	return append(b, region...)
}

func checkStatusKey(check string) []byte { return k(prefixCheckStatus, check) }

// BoundExecution cuts the free-text fields of e to the bounds the state
// machine accepts (the proposer calls it; apply refuses what exceeds them).
func BoundExecution(e *raftv1.Execution) { checkrun.Bound(e) }

// checkExecution returns why e cannot be stored, or "".
func checkExecution(e *raftv1.Execution) string {
	switch {
	case e.GetCheckUuid() == "" || e.GetAccountId() == "":
		return "check_uuid and account_id are required"
	case e.GetRegion() == "" || len(e.GetRegion()) > MaxExecutionLabel || len(e.GetAgent()) > MaxExecutionLabel || len(e.GetAgentId()) > MaxExecutionLabel:
		return fmt.Sprintf("region is required; region, agent and agent_id are at most %d bytes", MaxExecutionLabel)
	case !knownExecStatus(e.GetStatus()):
		return fmt.Sprintf("unknown status %q", e.GetStatus())
	case e.GetSlotUnixMs() <= 0:
		return "slot_unix_ms must be positive"
	case len(e.GetError()) > MaxExecutionError || len(e.GetErrorKind()) > MaxExecutionLabel:
		return "error or error_kind too long"
	}
	if s := e.GetSsl(); s != nil {
		if len(s.GetIssuer()) > MaxExecutionText || len(s.GetSubject()) > MaxExecutionText || len(s.GetDnsNames()) > MaxExecutionDNSNames {
			return "ssl issuer, subject or dns_names too long"
		}
		for _, n := range s.GetDnsNames() {
			if len(n) > MaxExecutionDNSName {
				return "ssl dns name too long"
			}
		}
	}
	if d := e.GetDns(); d != nil {
		if len(d.GetAnswers()) > MaxExecutionAnswers {
			return fmt.Sprintf("dns answers: %d, at most %d", len(d.GetAnswers()), MaxExecutionAnswers)
		}
		for _, a := range d.GetAnswers() {
			if len(a) > MaxExecutionAnswer {
				return "dns answer too long"
			}
		}
	}
	return ""
}

// applyRecordExecutions stores check executions, each keyed by (check,
// region, slot). A repeat is stored once: a final verdict is never
// changed, and a status that is not final is replaced only by a later one
// (a final one, or more attempts). A final verdict for the check's newest
// slot updates its status record and raises its alerts (check_alerts.go);
// an Interrupted one is final but no verdict: it moves neither the
// verdict nor the alerts.
// Executions of a check that is gone (deleted meanwhile) are dropped. The
// result message is how many executions were written.
func applyRecordExecutions(txn *badger.Txn, ctx applyCtx, c *raftv1.RecordExecutions) (*raftv1.Result, error) {
	execs := c.GetExecutions()
	if len(execs) == 0 || len(execs) > MaxExecutionsPerCommand {
		return invalid("record executions: 1 to %d executions", MaxExecutionsPerCommand), nil
	}
	for i, e := range execs {
		if why := checkExecution(e); why != "" {
			return invalid("record executions: execution %d: %s", i, why), nil
		}
	}
	keep := c.GetRetentionCount()
	if keep <= 0 {
		keep = DefaultExecutionRetention
	}
	budget := len(execs) + executionTrimSlack
	written := 0
	for i, e := range execs {
		w, err := recordExecution(txn, ctx, i, e, keep, &budget)
		if err != nil {
			return nil, err
		}
		if w {
			written++
		}
	}
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Message: strconv.Itoa(written)}, nil
}

// recordExecution stores e (position pos of the entry); it reports whether
// it wrote it.
func recordExecution(txn *badger.Txn, ctx applyCtx, pos int, e *raftv1.Execution, keep int64, budget *int) (bool, error) {
	m, err := getMonitorIn(txn, ctx.values, e.GetCheckUuid())
	if errors.Is(err, ErrNotFound) || (err == nil && (m.GetAccountId() != e.GetAccountId() || m.GetKind() == KindPing)) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	key := executionKey(e.GetCheckUuid(), e.GetSlotUnixMs(), e.GetRegion())
	var prev raftv1.Execution
	err = getProto(txn, key, &prev)
	existed := err == nil
	switch {
	case existed && FinalStatus(prev.GetStatus()):
		return false, nil // the verdict stands
	case existed && !FinalStatus(e.GetStatus()) && e.GetAttempts() < prev.GetAttempts():
		return false, nil // older news
	case err != nil && !errors.Is(err, ErrNotFound):
		return false, err
	}
	if err := setProto(txn, key, e); err != nil {
		return false, err
	}
	cs, err := getCheckStatus(txn, ctx.values, e.GetCheckUuid())
	if err != nil {
		return false, err
	}
	if !existed {
		cs.Executions++
	}
	if e.GetSlotUnixMs() >= cs.GetLastSlotUnixMs() {
		cs.LastSlotUnixMs, cs.LastStatus = e.GetSlotUnixMs(), e.GetStatus()
	}
	if FinalStatus(e.GetStatus()) && !Interrupted(e) && e.GetSlotUnixMs() >= cs.GetVerdictSlotUnixMs() {
		uptime := beforeChange(m, cs.GetVerdict())
		if len(m.GetRegions()) > 0 {
			err = onRegionVerdict(txn, ctx, pos, m, cs, e)
		} else {
			err = onVerdict(txn, ctx, pos, m, cs, e)
		}
		if err != nil {
			return false, err
		}
		// Up or down from when the execution that decided it finished.
		at := e.GetFinishedUnixMs()
		if at <= 0 {
			at = e.GetSlotUnixMs()
		}
		if err := uptime.after(txn, ctx, cs.GetVerdict(), at); err != nil {
			return false, err
		}
	}
	if err := trimExecutions(txn, e.GetCheckUuid(), cs, keep, budget); err != nil {
		return false, err
	}
	return true, putCheckStatus(txn, ctx.values, e.GetCheckUuid(), cs)
}

// onVerdict records the final execution e as m's newest verdict and raises
// the alerts it causes through the gate (quiet.go), unless m is disabled or
// its account suspended (then the standing alert is left as it was: it is
// what was sent).
func onVerdict(txn *badger.Txn, ctx applyCtx, pos int, m *statev1.Monitor, cs *statev1.CheckStatus, e *raftv1.Execution, regions ...string) error {
	cs.VerdictSlotUnixMs, cs.Verdict, cs.LastExecutionUnixMs = e.GetSlotUnixMs(), e.GetStatus(), e.GetFinishedUnixMs()
	cs.DaysLeft = nil
	if s := e.GetSsl(); s != nil && m.GetKind() == KindSSLCheck {
		d := s.GetDaysLeft()
		cs.DaysLeft = &d
	}
	countSlot(cs, e)
	raise, standing := checkAlerts(m.GetKind(), cs.GetAlert(), e)
	raise, standing = belowThreshold(m, cs, raise, standing)
	if len(raise) > 0 && m.GetEnabled() {
		muted, err := suspendedAt(txn, m.GetAccountId(), ctx.now)
		if err != nil {
			return err
		}
		if muted {
			raise = nil
		}
	} else {
		raise = nil
	}
	changed := noteDown(m, checkDown(m, cs), e.GetFinishedUnixMs())
	quiet, err := releaseCheck(txn, ctx, pos, m, cs, e, raise, standing, regions)
	if err != nil || !(changed || quiet) {
		return err
	}
	return putMonitorIn(txn, ctx.values, m)
}

// putCheckStatus writes a check's status record, through the value cache
// (which tells the list cache, listcache.go).
func putCheckStatus(txn *badger.Txn, values *valueCache, check string, cs *statev1.CheckStatus) error {
	v, err := proto.MarshalOptions{Deterministic: true}.Marshal(cs)
	if err != nil {
		return fmt.Errorf("encode the status of check %s: %w", check, err)
	}
	return values.set(txn, checkStatusKey(check), v)
}

// getCheckStatus reads a check's status record (empty when it has none),
// through values in an apply (nil outside one).
func getCheckStatus(txn *badger.Txn, values *valueCache, check string) (*statev1.CheckStatus, error) {
	cs := new(statev1.CheckStatus)
	v, err := values.get(txn, checkStatusKey(check))
	switch {
	case errors.Is(err, ErrNotFound):
		return cs, nil
	case err != nil:
		return nil, err
	}
	if err := proto.Unmarshal(v, cs); err != nil {
		return nil, fmt.Errorf("decode the status of check %s: %w", check, err)
	}
	return cs, nil
}

// trimExecutions drops the check's oldest executions beyond keep, within
// the budget of deletions.
func trimExecutions(txn *badger.Txn, check string, cs *statev1.CheckStatus, keep int64, budget *int) error {
	over := cs.GetExecutions() - keep
	if over <= 0 || *budget <= 0 {
		return nil
	}
	var old [][]byte
	it := txn.NewIterator(badger.IteratorOptions{Prefix: k(prefixExecution, check, "")})
	for it.Rewind(); it.Valid() && int64(len(old)) < over && len(old) < *budget; it.Next() {
		old = append(old, it.Item().KeyCopy(nil))
	}
	it.Close()
	for _, key := range old {
		if err := txn.Delete(key); err != nil {
			return err
		}
	}
	*budget -= len(old)
	cs.Executions -= int64(len(old))
	return nil
}

// deleteExecutions removes a check's executions and status (a deleted
// monitor). Retention bounds how many there are.
func deleteExecutions(txn *badger.Txn, values *valueCache, check string) error {
	var keys [][]byte
	it := txn.NewIterator(badger.IteratorOptions{Prefix: k(prefixExecution, check, "")})
	for it.Rewind(); it.Valid(); it.Next() {
		keys = append(keys, it.Item().KeyCopy(nil))
	}
	it.Close()
	for _, key := range keys {
		if err := txn.Delete(key); err != nil {
			return err
		}
	}
	return values.del(txn, checkStatusKey(check))
}

// Executions returns up to limit (all when limit <= 0) executions of the
// account's check, newest slot first.
func (s *Store) Executions(accountID, checkUUID string, limit int) ([]*raftv1.Execution, error) {
	return s.ExecutionsBefore(accountID, checkUUID, nil, limit)
}

// ExecutionPos is where an execution sorts in a check's history: by slot,
// then region.
type ExecutionPos struct {
	SlotMs int64
	Region string
}

// PosOf is the position of e.
func PosOf(e *raftv1.Execution) ExecutionPos {
	return ExecutionPos{SlotMs: e.GetSlotUnixMs(), Region: e.GetRegion()}
}

// ExecutionsBefore returns up to limit (all when limit <= 0) executions of
// the account's check that sort below before (nil: from the newest), newest
// slot first: a page of its history, the next one before the position of
// the last execution returned. Each page is one ranged read.
func (s *Store) ExecutionsBefore(accountID, checkUUID string, before *ExecutionPos, limit int) ([]*raftv1.Execution, error) {
	var out []*raftv1.Execution
	err := s.view(func(txn *badger.Txn) error {
		m, err := getMonitor(txn, checkUUID)
		if err != nil {
			return err
		}
		if m.GetAccountId() != accountID {
			return ErrNotFound
		}
		prefix := k(prefixExecution, checkUUID, "")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		// Reverse, Seek finds the last key at or below its argument: the
		// bound itself is skipped.
		seek := append(bytes.Clone(prefix), bytes.Repeat([]byte{0xff}, 9)...)
		var bound []byte
		if before != nil {
			bound = executionKey(checkUUID, before.SlotMs, before.Region)
			seek = bound
		}
		for it.Seek(seek); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
			if bound != nil && bytes.Equal(it.Item().Key(), bound) {
				continue
			}
			e := new(raftv1.Execution)
			if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, e) }); err != nil {
				return fmt.Errorf("decode %q: %w", it.Item().Key(), err)
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// Execution returns the execution of a check for (region, slot);
// ErrNotFound when there is none.
func (s *Store) Execution(checkUUID, region string, slotMs int64) (*raftv1.Execution, error) {
	e := new(raftv1.Execution)
	if err := s.view(func(txn *badger.Txn) error { return getProto(txn, executionKey(checkUUID, slotMs, region), e) }); err != nil {
		return nil, err
	}
	return e, nil
}

// CheckStatus returns what a check's executions left behind (an empty
// record when it has none).
func (s *Store) CheckStatus(checkUUID string) (*statev1.CheckStatus, error) {
	var cs *statev1.CheckStatus
	err := s.view(func(txn *badger.Txn) error {
		var err error
		cs, err = getCheckStatus(txn, nil, checkUUID)
		return err
	})
	return cs, err
}

// Checks calls fn for every check (every kind but ping) of every account (the
// scheduler's rebuild).
func (s *Store) Checks(fn func(*statev1.Monitor) error) error {
	return s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixMonitor, func() *statev1.Monitor { return new(statev1.Monitor) }, func(m *statev1.Monitor) error {
			if m.GetKind() == KindPing {
				return nil
			}
			return fn(m)
		})
	})
}

// executionNamespace is the UUID namespace of execution ids.
var executionNamespace = uuid.MustParse("7c1f4a52-93d0-4a8e-b6a3-0d5e8c2f6b14")

// ExecutionID is the id of the execution of check in region for the slot
// derived from the three, so it is the same
// whoever records it and however often.
func ExecutionID(check, region string, slotMs int64) string {
	return uuid.NewSHA1(executionNamespace, []byte(check+"\x00"+region+"\x00"+strconv.FormatInt(slotMs, 10))).String()
}
