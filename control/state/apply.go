package state

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	"lookout/cluster/clusterapi"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// CommandVersion is the envelope version this code applies.
const CommandVersion = 1

// requestTTLMillis is how long a request id is remembered for
// deduplication. Request ids are retried only by cluster.Apply, within its
// wait for a leader and its apply timeout (seconds), so two minutes is
// plenty; a longer memory would cost a lot of space at high ingest rates
// (each IngestBatch result is kept).
const requestTTLMillis = 2 * 60 * 1000

// Entry is one raft log entry to apply.
type Entry = clusterapi.Entry

// CommandVersion returns the envelope version this code applies (the node
// stamps it on the commands it proposes).
func (s *Store) CommandVersion() uint32 { return CommandVersion }

// ApplyBatch applies entries in order and returns one result per entry; an
// entry at or below the applied index (replayed after a restart) is skipped
// and its result is nil. Entries are applied in one Badger transaction; when
// the batch does not fit one, it is split between entries, never inside one,
// and each transaction records the index of its last entry.
//
// A command over its bounds (CheckCommand), and an entry that alone does
// not fit a fresh transaction, are answered INVALID (CodeCommandTooLarge)
// and write only the applied index. An I/O error of the database panics:
// the node cannot keep a state that differs from its peers', and a restart
// replays from the applied index.
func (s *Store) ApplyBatch(entries []Entry) []*raftv1.Result {
	results := make([]*raftv1.Result, len(entries))
	for start := 0; start < len(entries); {
		n, err := s.applyRun(entries[start:], results[start:])
		if err != nil {
			panic(fmt.Sprintf("state: apply raft entries from index %d: %v", entries[start].Index, err))
		}
		start += n
	}
	return results
}

// applyRun applies as many leading entries as fit in one transaction,
// commits them and returns how many it consumed. An entry that does not fit
// even alone is refused (refuseTooBig).
func (s *Store) applyRun(entries []Entry, results []*raftv1.Result) (int, error) {
	applied := s.AppliedIndex()
	txn := s.db().NewTransaction(true)
	defer func() { txn.Discard() }()
	last := applied
	n := 0
	for i, e := range entries {
		if e.Index <= applied {
			n = i + 1
			continue
		}
		res, err := s.applyEntry(txn, e)
		if errors.Is(err, badger.ErrTxnTooBig) {
			txn.Discard()
			txn = s.db().NewTransaction(true)
			if last != applied {
				// Commit what fits, without this entry: redo the run up
				// to it in a fresh transaction (apply is deterministic).
				return s.commitRun(txn, entries[:i], results)
			}
			// The entry alone does not fit a fresh transaction.
			res, err = s.refuseTooBig(txn, e)
		}
		if err != nil {
			return 0, err
		}
		results[i] = res
		last, n = e.Index, i+1
	}
	if last == applied {
		return n, nil
	}
	if err := txn.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	s.committed(txn)
	s.setApplied(last)
	return n, nil
}

// committed tells the caches and the change feed what txn, just
// committed, changed.
func (s *Store) committed(txn *badger.Txn) {
	s.due.committed()
	monitors, statuses := s.values.commit(txn)
	s.lists.apply(monitors, statuses)
	s.watch.publish(monitors, s.alertsRaised, false)
	s.alertsRaised = false
}

// commitRun applies entries (known to fit) in txn and commits.
func (s *Store) commitRun(txn *badger.Txn, entries []Entry, results []*raftv1.Result) (int, error) {
	applied := s.AppliedIndex()
	last := applied
	for i, e := range entries {
		if e.Index <= applied {
			continue
		}
		res, err := s.applyEntry(txn, e)
		if err != nil {
			return 0, err
		}
		results[i], last = res, e.Index
	}
	if err := txn.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	s.committed(txn)
	s.setApplied(last)
	return len(entries), nil
}

// refuseTooBig answers an entry that did not fit a fresh transaction as
// INVALID (CodeCommandTooLarge), writing only the applied index in txn.
//
// This is a safety net under the bounds of CheckCommand, which keep every
// command well inside the transaction limits of every Badger option set a
// node can run with, so that it is never reached. If a bound were wrong,
// panicking here would stop every node at every replay of the entry, for
// good; refusing it lets the cluster go on. Every node refuses it alike as
// long as they run the same options (the limits derive from them); a node
// with larger limits would apply it, which is why the bounds, not this,
// are what keeps the nodes equal. The entry is logged at error level.
func (s *Store) refuseTooBig(txn *badger.Txn, e Entry) (*raftv1.Result, error) {
	s.log.Error("raft entry does not fit one transaction; refused (a command bound is too loose)",
		"index", e.Index, "request_id", e.Command.GetRequestId(), "bytes", proto.Size(e.Command))
	s.alertsRaised = false
	res := &raftv1.Result{Status: raftv1.Status_STATUS_INVALID, Code: CodeCommandTooLarge,
		Message: "the command does not fit one transaction"}
	return res, txn.Set(keyApplied, u64(e.Index))
}

// applyEntry applies one entry and records its index in the same txn.
func (s *Store) applyEntry(txn *badger.Txn, e Entry) (*raftv1.Result, error) {
	cmd := e.Command
	if cmd.GetVersion() != CommandVersion {
		// Applying an envelope we do not understand would make this node's
		// state differ from its peers'. Stop instead.
		panic(fmt.Sprintf("state: raft entry %d has command version %d; this node applies version %d: upgrade it", e.Index, cmd.GetVersion(), CommandVersion))
	}
	if err := CheckCommand(cmd); err != nil {
		// Over its bounds: refused alike on every node, and not
		// remembered under its request id (a retry is refused again).
		return tooLarge(err), txn.Set(keyApplied, u64(e.Index))
	}
	if cmd.GetIngestBatch() == nil {
		s.values.dropAccounts()
	}
	if !keepsScans(cmd) {
		s.values.dropScans()
		s.channelsDirty = true // keepsScans lists no command that writes a channel or group
	}
	if changesAuth(cmd) {
		s.authDirty = true
	}
	if changesAssignments(cmd) {
		s.assignDirty = true
	}
	if changesPublic(cmd) {
		s.publicDirty = true
	}
	if changesWindows(cmd) {
		s.windows.dirty = true
	}
	res, err := s.applyOnce(txn, applyCtx{index: e.Index, now: cmd.GetTimeUnixMs(), values: s.values, raised: &s.alertsRaised, due: &s.due}, cmd)
	if err != nil {
		return nil, err
	}
	if err := txn.Set(keyApplied, u64(e.Index)); err != nil {
		return nil, err
	}
	return res, nil
}

// applyOnce applies cmd unless its request id was applied before, in which
// case it returns the earlier result.
func (s *Store) applyOnce(txn *badger.Txn, ctx applyCtx, cmd *raftv1.Command) (*raftv1.Result, error) {
	rid := cmd.GetRequestId()
	prevTime := int64(-1) // time of an expired entry of rid still stored
	if rid != "" {
		var prev statev1.AppliedRequest
		err := getProto(txn, k(prefixRequest, rid), &prev)
		switch {
		case err == nil && cmd.GetTimeUnixMs()-prev.GetTimeUnixMs() <= requestTTLMillis:
			return prev.GetResult(), nil
		case err == nil:
			// Older than the TTL: new, whether or not it was pruned yet,
			// so results never depend on when pruning ran.
			prevTime = prev.GetTimeUnixMs()
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	prior, err := auditBefore(txn, ctx, cmd)
	if err != nil {
		return nil, err
	}
	res, err := dispatch(txn, ctx, cmd)
	if err == nil && res.GetStatus() == raftv1.Status_STATUS_OK {
		// The change's audit entries, in its transaction (audit.go).
		err = auditAfter(txn, ctx, cmd, res, prior)
	}
	if err != nil || rid == "" {
		return res, err
	}
	return res, rememberRequest(txn, rid, cmd.GetTimeUnixMs(), prevTime, res)
}

// applyCtx is what an apply function may know about its entry besides the
// command: the raft index (unique per entry, so ids derived from it never
// collide) and the leader-stamped time. values is the store's cache of
// committed values (nil: none), which makes reads faster, never different.
type applyCtx struct {
	index  uint64
	now    int64
	values *valueCache
	// raised is set when the entry raises an alert (a hint for the
	// dispatcher, outside the state).
	raised *bool
	// due hears of the due keys the entry sets (nil: nothing hears).
	due *dueFloor
}

// applyEach applies the items of a batch command (1 to max of them) in
// order, each with apply as its single command would be, a later one seeing
// what an earlier one changed, and returns their results as the items of
// an OK result. An item's refusal is its result; an error fails the entry.
func applyEach[T any](txn *badger.Txn, ctx applyCtx, what string, items []T, max int, apply func(*badger.Txn, applyCtx, T) (*raftv1.Result, error)) (*raftv1.Result, error) {
	if len(items) == 0 || len(items) > max {
		return invalid("%s: 1 to %d items", what, max), nil
	}
	out := ok()
	for _, item := range items {
		res, err := apply(txn, ctx, item)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, res)
	}
	return out, nil
}

// dispatch calls the apply function of the command's type.
func dispatch(txn *badger.Txn, ctx applyCtx, cmd *raftv1.Command) (*raftv1.Result, error) {
	now := ctx.now
	switch op := cmd.GetOp().(type) {
	case *raftv1.Command_CreateAccount:
		return applyCreateAccount(txn, now, op.CreateAccount)
	case *raftv1.Command_SetPlan:
		return applySetPlan(txn, now, op.SetPlan)
	case *raftv1.Command_SetPassword:
		return applySetPassword(txn, op.SetPassword)
	case *raftv1.Command_EndSession:
		return applyEndSession(txn, now, op.EndSession)
	case *raftv1.Command_AddUser:
		return applyAddUser(txn, now, op.AddUser)
	case *raftv1.Command_UpdateUser:
		return applyUpdateUser(txn, op.UpdateUser)
	case *raftv1.Command_RemoveUser:
		return applyRemoveUser(txn, op.RemoveUser)
	case *raftv1.Command_CreateInvite:
		return applyCreateInvite(txn, now, op.CreateInvite)
	case *raftv1.Command_AcceptInvite:
		return applyAcceptInvite(txn, now, op.AcceptInvite)
	case *raftv1.Command_RevokeInvite:
		return applyRevokeInvite(txn, op.RevokeInvite)
	case *raftv1.Command_CreateKey:
		return applyCreateKey(txn, now, op.CreateKey.GetKey())
	case *raftv1.Command_RevokeKey:
		return applyRevokeKey(txn, ctx.values, op.RevokeKey)
	case *raftv1.Command_RecordKeyUsed:
		return applyRecordKeyUsed(txn, ctx, op.RecordKeyUsed)
	case *raftv1.Command_CreateNotificationGroup:
		return applyCreateGroup(txn, now, op.CreateNotificationGroup)
	case *raftv1.Command_CreateAgentToken:
		return applyCreateAgentToken(txn, now, op.CreateAgentToken)
	case *raftv1.Command_RevokeAgentToken:
		return applyRevokeAgentToken(txn, op.RevokeAgentToken)
	case *raftv1.Command_IngestBatch:
		return applyIngestBatch(txn, ctx, op.IngestBatch)
	case *raftv1.Command_CreateChannel:
		return applyCreateChannel(txn, now, op.CreateChannel)
	case *raftv1.Command_UpdateChannel:
		return applyUpdateChannel(txn, op.UpdateChannel)
	case *raftv1.Command_DeleteChannel:
		return applyDeleteChannel(txn, ctx, op.DeleteChannel)
	case *raftv1.Command_UpdateNotificationGroup:
		return applyUpdateGroup(txn, ctx, op.UpdateNotificationGroup)
	case *raftv1.Command_DeleteNotificationGroup:
		return applyDeleteGroup(txn, ctx, op.DeleteNotificationGroup)
	case *raftv1.Command_FireDeadline:
		return applyFireDeadline(txn, ctx, op.FireDeadline)
	case *raftv1.Command_FireDeadlines:
		return applyFireDeadlines(txn, ctx, op.FireDeadlines)
	case *raftv1.Command_RecordDelivery:
		return applyRecordDelivery(txn, ctx, op.RecordDelivery)
	case *raftv1.Command_RecordDeliveries:
		return applyRecordDeliveries(txn, ctx, op.RecordDeliveries)
	case *raftv1.Command_PruneAlerts:
		return applyPruneAlerts(txn, op.PruneAlerts)
	case *raftv1.Command_PutMonitors:
		return applyPutMonitors(txn, ctx, op.PutMonitors)
	case *raftv1.Command_PruneEvents:
		return applyPruneEvents(txn, ctx, op.PruneEvents)
	case *raftv1.Command_DeleteMonitor:
		return applyDeleteMonitor(txn, ctx, op.DeleteMonitor)
	case *raftv1.Command_RecordExecutions:
		return applyRecordExecutions(txn, ctx, op.RecordExecutions)
	case *raftv1.Command_RecordAgentSeen:
		return applyRecordAgentSeen(txn, ctx, op.RecordAgentSeen)
	case *raftv1.Command_SetRegionState:
		return applySetRegionState(txn, ctx, op.SetRegionState)
	case *raftv1.Command_ForgetAgents:
		return applyForgetAgents(txn, ctx, op.ForgetAgents)
	case *raftv1.Command_SetBadgeKey:
		return applySetBadgeKey(txn, op.SetBadgeKey)
	case *raftv1.Command_PutStatusPage:
		return applyPutStatusPage(txn, ctx, op.PutStatusPage)
	case *raftv1.Command_PauseMonitor:
		return applyPauseMonitor(txn, ctx, op.PauseMonitor)
	case *raftv1.Command_JudgeAfresh:
		return applyJudgeAfresh(txn, ctx, op.JudgeAfresh)
	case *raftv1.Command_PutMaintenanceWindow:
		return applyPutMaintenanceWindow(txn, ctx, op.PutMaintenanceWindow)
	case *raftv1.Command_DeleteMaintenanceWindow:
		return applyDeleteMaintenanceWindow(txn, op.DeleteMaintenanceWindow)
	case *raftv1.Command_MarkAlive:
		return applyMarkAlive(txn, ctx, op.MarkAlive)
	case *raftv1.Command_RecordSignIn:
		return applyRecordSignIn(txn, cmd)
	default:
		return invalid("command has no known operation"), nil
	}
}

func ok() *raftv1.Result { return &raftv1.Result{Status: raftv1.Status_STATUS_OK} }

func notFound(format string, a ...any) *raftv1.Result {
	return &raftv1.Result{Status: raftv1.Status_STATUS_NOT_FOUND, Message: fmt.Sprintf(format, a...)}
}

func conflict(format string, a ...any) *raftv1.Result {
	return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Message: fmt.Sprintf(format, a...)}
}

func invalid(format string, a ...any) *raftv1.Result {
	return &raftv1.Result{Status: raftv1.Status_STATUS_INVALID, Message: fmt.Sprintf(format, a...)}
}
