package state

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// The bounds of one raft command. Every command must fit one Badger
// transaction whatever Badger options a node runs with, or it could never
// be applied: a transaction that is too big fails alike at every replay.
// The bounds are plain numbers, checked before a command is applied
// (CheckCommand), so every node gives the same answer: a command over them
// is answered INVALID with CodeCommandTooLarge and writes nothing but the
// applied index. The APIs check them first and answer 413 or 422.
//
// They are chosen well below the transaction of the options every
// `lookout control` node runs with (the default ones; the Small options are
// for tests and no flag selects them). Badger derives a transaction's limits from the memtable size: at most
// 15% of it in estimated bytes (key + value + 12 per write, but a value at
// or over the value threshold counts only as a 12-byte pointer) and that
// divided by 96 in writes. The Small options (4 MiB memtables, a 1 KiB
// value threshold; tests and small machines) allow 629,145 bytes and 6,553
// writes; the default options (64 MiB, values up to 1 MiB inline) allow
// ~10 MB and 104,857 writes. Keys are at most 65,000 bytes.
//
// The worst cases (limits_test.go applies each in a transaction that is
// already a quarter full, with the Small and the default options):
//
//   - PutMonitors: per monitor at most four writes (the record, the new
//     name, the old name of a renamed check, a new project) with keys of at
//     most MaxKeyPartBytes (a project's key holds its hex), under 4 KiB in
//     all: 1,000 renamed checks with the longest names fit a default
//     transaction with room to spare (about 180 fit a Small one, which
//     tests never come near). With the default options the records count
//     in full, and MaxPutMonitorsBytes keeps them to about 2 MB.
//   - The small commands (accounts, keys, groups, channels, tokens, ...)
//     write a handful of keys of at most MaxKeyPartBytes and values bounded
//     by MaxCommandBytes.
//   - IngestBatch has its own bounds (IngestBatchMaxEvents,
//     IngestBatchMaxBytes; see ingest.go: its worst case fits the default
//     options, not the Small ones). PruneEvents and the events a
//     DeleteMonitor removes are bounded by MaxPruneEvents and
//     MaxPruneMonitors.
//   - RecordExecutions holds at most MaxExecutionsPerCommand executions
//     of bounded fields (executions.go): about 170 KiB at most, under
//     MaxCommandBytes; each may raise one alert.
//   - PruneAlerts deletes two keys per alert (no value read), at most
//     MaxPruneAlerts alerts.
//   - The user and invite commands write a user and its e-mail index, or
//     an invite and its index; CreateInvite and AcceptInvite also read and
//     may delete the account's invites, at most MaxAccountInvites (two
//     keys each), and count its users (MaxAccountUsers, read only).
//   - SetBadgeKey rewrites one account and two index keys; PutStatusPage
//     writes one page of at most MaxStatusPageMatch match entries (within
//     MaxCommandBytes) and two slug keys.
//   - RecordAgentSeen writes one agent record. SetRegionState holds at
//     most MaxRegionAccounts accounts, each alerted once (an alert, its
//     deliveries and a mark): about 3,400 writes at most.
//   - RecordDelivery rewrites one alert and writes one record of its
//     channel's history, dropping the oldest beyond MaxChannelHistory;
//     RecordDeliveries does so for at most MaxRecordDeliveries records.
//     DeleteChannel, UpdateNotificationGroup and DeleteNotificationGroup
//     give up deliveries within MaxGiveUpBytes and MaxGiveUpWrites (and
//     DeleteChannel deletes the channel's history, MaxChannelHistory
//     keys).
//   - PutMaintenanceWindow writes one window (MaxCommandBytes) after
//     reading the account's (MaxMaintenanceWindows); DeleteMaintenanceWindow
//     deletes one.
//   - PauseMonitor rewrites one monitor and may raise its held alert.
//     JudgeAfresh rewrites at most MaxJudgeAfresh monitors, each raising
//     at most two alerts and rewriting its check status.
//   - FireDeadlines applies at most MaxFireDeadlines deadlines, each as
//     a FireDeadline: a monitor rewritten, a missed event, an alert.
//   - Audit entries (audit.go): one per change, written with it. An
//     entry is at most a few KB (its diff bounded by maxAuditDiffBytes,
//     its values and target name by maxAuditValueBytes, its actor by
//     MaxActorBytes), one key; a PutMonitors writes one per monitor, an
//     IngestBatch one per monitor its pings create, every other command at
//     most one. Past an account's MaxAuditEntries each new entry deletes
//     the oldest (one more write). PruneEvents deletes at most its max.
//   - Alerts (raised by IngestBatch, FireDeadline(s), RecordExecutions,
//     SetRegionState, PauseMonitor and JudgeAfresh)
//     carry one delivery
//     per channel: MaxGroupChannels and MaxAccountChannels bound them.
const (
	// MaxPutMonitors bounds the monitors (creates and updates) of one
	// PutMonitors: one apply, POST or PUT of the Management API.
	MaxPutMonitors = 1000
	// MaxPutMonitorsBytes bounds an encoded PutMonitors.
	MaxPutMonitorsBytes = 2 << 20
	// MaxCommandBytes bounds the encoded operation of every other command
	// but IngestBatch.
	MaxCommandBytes = 256 << 10
	// MaxKeyPartBytes bounds every string of a command that becomes part
	// of a key (ids, names, e-mail addresses, hashes, request ids). A
	// check's name (255 characters of up to 4 bytes) fits.
	MaxKeyPartBytes = 1024
	// MaxProjectBytes bounds a project name (100 characters of up to 4
	// bytes).
	MaxProjectBytes = 400
	// MaxGroupChannels bounds the channels of one notification group.
	MaxGroupChannels = 50
	// MaxAccountChannels bounds the channels (alert channels of
	// CreateChannel) of one account.
	MaxAccountChannels = 100
	// MaxPruneMonitors bounds the monitors whose records one PruneEvents
	// rewrites (each can be tens of KB): the entry stops at the next
	// monitor and reports max, so that the leader proposes again.
	MaxPruneMonitors = 64
)

// CodeCommandTooLarge is the Result code of a command over its bounds, or
// (the safety net of applyRun) one that did not fit a Badger transaction.
const CodeCommandTooLarge = "command_too_large"

// CodeChannelLimitReached is the Result code (CONFLICT) of a
// CreateChannel for an account that has MaxAccountChannels channels.
const CodeChannelLimitReached = "channel_limit_reached"

// CheckCommand tells why cmd is over the bounds above (nil when it is
// within them). The state machine refuses such a command; the APIs call it
// before proposing one, to refuse it first. It depends on the command
// only, never on the state or the node.
func CheckCommand(cmd *raftv1.Command) error {
	if n := len(cmd.GetRequestId()); n > MaxKeyPartBytes {
		return fmt.Errorf("request id of %d bytes, at most %d", n, MaxKeyPartBytes)
	}
	if n := proto.Size(cmd.GetActor()); n > MaxActorBytes {
		return fmt.Errorf("actor of %d bytes, at most %d", n, MaxActorBytes)
	}
	switch op := cmd.GetOp().(type) {
	case *raftv1.Command_IngestBatch:
		return checkIngestBatch(op.IngestBatch)
	case *raftv1.Command_PutMonitors:
		return checkPutMonitors(op.PutMonitors)
	case *raftv1.Command_CreateAccount:
		c := op.CreateAccount
		parts := append(keyParts(c.GetIngestKey()), keyParts(c.GetManagementKey())...)
		return checkSmall("create account", c, append(parts, c.GetAccountId(), c.GetEmail(), c.GetPlan().GetName())...)
	case *raftv1.Command_SetPlan:
		c := op.SetPlan
		return checkSmall("set plan", c, c.GetAccountId(), c.GetPlan().GetName())
	case *raftv1.Command_SetPassword:
		c := op.SetPassword
		if n := len(c.GetPasswordHash()); n > MaxPasswordHashBytes {
			return fmt.Errorf("set password: hash of %d bytes, at most %d", n, MaxPasswordHashBytes)
		}
		return checkSmall("set password", c, c.GetAccountId())
	case *raftv1.Command_EndSession:
		c := op.EndSession
		return checkSmall("end session", c, c.GetSessionId(), c.GetAccountId())
	case *raftv1.Command_AddUser:
		c := op.AddUser
		if err := checkHash(c.GetPasswordHash()); err != nil {
			return err
		}
		return checkSmall("add user", c, c.GetAccountId(), c.GetUserId(), c.GetEmail())
	case *raftv1.Command_UpdateUser:
		c := op.UpdateUser
		if err := checkHash(c.GetPasswordHash()); err != nil {
			return err
		}
		return checkSmall("update user", c, c.GetAccountId(), c.GetUserId())
	case *raftv1.Command_RemoveUser:
		c := op.RemoveUser
		return checkSmall("remove user", c, c.GetAccountId(), c.GetUserId())
	case *raftv1.Command_CreateInvite:
		c := op.CreateInvite
		return checkSmall("create invite", c, c.GetAccountId(), c.GetInviteId(), string(c.GetTokenHash()), c.GetEmail())
	case *raftv1.Command_AcceptInvite:
		c := op.AcceptInvite
		if err := checkHash(c.GetPasswordHash()); err != nil {
			return err
		}
		return checkSmall("accept invite", c, string(c.GetTokenHash()), c.GetAccountId(), c.GetEmail(), c.GetUserId())
	case *raftv1.Command_RevokeInvite:
		c := op.RevokeInvite
		return checkSmall("revoke invite", c, c.GetAccountId(), c.GetInviteId())
	case *raftv1.Command_CreateKey:
		return checkSmall("create key", op.CreateKey, keyParts(op.CreateKey.GetKey())...)
	case *raftv1.Command_RevokeKey:
		c := op.RevokeKey
		return checkSmall("revoke key", c, c.GetAccountId(), c.GetKeyId())
	case *raftv1.Command_RecordKeyUsed:
		c := op.RecordKeyUsed
		return checkSmall("record key used", c, c.GetAccountId(), c.GetKeyId())
	case *raftv1.Command_CreateNotificationGroup:
		c := op.CreateNotificationGroup
		return checkSmall("create notification group", c, c.GetAccountId(), c.GetGroupId(), c.GetName())
	case *raftv1.Command_CreateAgentToken:
		c := op.CreateAgentToken
		return checkSmall("create agent token", c, c.GetId(), c.GetRegion(), c.GetName(), string(c.GetHash()), c.GetReplaces())
	case *raftv1.Command_RevokeAgentToken:
		return checkSmall("revoke agent token", op.RevokeAgentToken, op.RevokeAgentToken.GetId())
	case *raftv1.Command_CreateChannel:
		c := op.CreateChannel
		return checkSmall("create channel", c, c.GetAccountId(), c.GetChannelId(), c.GetType(), c.GetName())
	case *raftv1.Command_UpdateChannel:
		c := op.UpdateChannel
		return checkSmall("update channel", c, c.GetAccountId(), c.GetChannelId(), c.GetType(), c.GetName())
	case *raftv1.Command_DeleteChannel:
		c := op.DeleteChannel
		return checkSmall("delete channel", c, c.GetAccountId(), c.GetChannelId())
	case *raftv1.Command_UpdateNotificationGroup:
		c := op.UpdateNotificationGroup
		return checkSmall("update notification group", c, c.GetAccountId(), c.GetGroupId(), c.GetName())
	case *raftv1.Command_DeleteNotificationGroup:
		c := op.DeleteNotificationGroup
		return checkSmall("delete notification group", c, c.GetAccountId(), c.GetGroupId())
	case *raftv1.Command_PruneEvents:
		return checkSmall("prune events", op.PruneEvents)
	case *raftv1.Command_PruneAlerts:
		return checkSmall("prune alerts", op.PruneAlerts)
	case *raftv1.Command_DeleteMonitor:
		c := op.DeleteMonitor
		return checkSmall("delete monitor", c, c.GetAccountId(), c.GetMonitorUuid())
	case *raftv1.Command_FireDeadline:
		c := op.FireDeadline
		return checkSmall("fire deadline", c, c.GetAccountId(), c.GetMonitorUuid(), c.GetKind())
	case *raftv1.Command_FireDeadlines:
		c := op.FireDeadlines
		if n := len(c.GetDeadlines()); n > MaxFireDeadlines {
			return fmt.Errorf("fire deadlines: %d deadlines, at most %d", n, MaxFireDeadlines)
		}
		var parts []string
		for _, d := range c.GetDeadlines() {
			parts = append(parts, d.GetAccountId(), d.GetMonitorUuid(), d.GetKind())
		}
		return checkSmall("fire deadlines", c, parts...)
	case *raftv1.Command_RecordExecutions:
		c := op.RecordExecutions
		if n := c.GetRetentionCount(); n > MaxExecutionRetention {
			return fmt.Errorf("record executions: retention of %d, at most %d", n, MaxExecutionRetention)
		}
		var parts []string
		for _, e := range c.GetExecutions() {
			parts = append(parts, e.GetAccountId(), e.GetCheckUuid(), e.GetRegion())
		}
		return checkSmall("record executions", c, parts...)
	case *raftv1.Command_RecordAgentSeen:
		c := op.RecordAgentSeen
		return checkSmall("record agent seen", c, c.GetAgentId(), c.GetRegion())
	case *raftv1.Command_SetRegionState:
		c := op.SetRegionState
		if n := len(c.GetAccounts()); n > MaxRegionAccounts {
			return fmt.Errorf("set region state: %d accounts, at most %d", n, MaxRegionAccounts)
		}
		parts := []string{c.GetRegion()}
		for _, a := range c.GetAccounts() {
			parts = append(parts, a.GetAccountId())
		}
		return checkSmall("set region state", c, parts...)
	case *raftv1.Command_ForgetAgents:
		c := op.ForgetAgents
		if n := len(c.GetAgentIds()); n > MaxForgetAgents {
			return fmt.Errorf("forget agents: %d agent ids, at most %d", n, MaxForgetAgents)
		}
		return checkSmall("forget agents", c, append([]string{c.GetRegion()}, c.GetAgentIds()...)...)
	case *raftv1.Command_RecordDelivery:
		c := op.RecordDelivery
		return checkSmall("record delivery", c, c.GetAlertId(), c.GetChannelRef())
	case *raftv1.Command_RecordDeliveries:
		c := op.RecordDeliveries
		if n := len(c.GetRecords()); n > MaxRecordDeliveries {
			return fmt.Errorf("record deliveries: %d records, at most %d", n, MaxRecordDeliveries)
		}
		var parts []string
		for _, r := range c.GetRecords() {
			parts = append(parts, r.GetAlertId(), r.GetChannelRef())
		}
		return checkSmall("record deliveries", c, parts...)
	case *raftv1.Command_SetBadgeKey:
		c := op.SetBadgeKey
		return checkSmall("set badge key", c, c.GetAccountId(), c.GetBadgeKey())
	case *raftv1.Command_RecordSignIn:
		c := op.RecordSignIn
		return checkSmall("record sign-in", c, c.GetAccountId())
	case *raftv1.Command_PutStatusPage:
		c := op.PutStatusPage
		m := c.GetMatch()
		if n := len(m.GetMonitors()) + len(m.GetTags()) + len(m.GetProjects()); n > MaxStatusPageMatch {
			return fmt.Errorf("put status page: %d match entries, at most %d", n, MaxStatusPageMatch)
		}
		return checkSmall("put status page", c, c.GetAccountId(), c.GetSlug())
	case *raftv1.Command_PauseMonitor:
		c := op.PauseMonitor
		return checkSmall("pause monitor", c, c.GetAccountId(), c.GetMonitorUuid())
	case *raftv1.Command_JudgeAfresh:
		c := op.JudgeAfresh
		if n := len(c.GetMonitorUuids()); n > MaxJudgeAfresh {
			return fmt.Errorf("judge afresh: %d monitors, at most %d", n, MaxJudgeAfresh)
		}
		return checkSmall("judge afresh", c, c.GetMonitorUuids()...)
	case *raftv1.Command_PutMaintenanceWindow:
		w := op.PutMaintenanceWindow.GetWindow()
		return checkSmall("put maintenance window", op.PutMaintenanceWindow, w.GetAccountId(), w.GetId())
	case *raftv1.Command_DeleteMaintenanceWindow:
		c := op.DeleteMaintenanceWindow
		return checkSmall("delete maintenance window", c, c.GetAccountId(), c.GetId())
	case *raftv1.Command_MarkAlive:
		return checkSmall("mark alive", op.MarkAlive)
	}
	return nil
}

// checkHash bounds a password hash.
func checkHash(hash []byte) error {
	if n := len(hash); n > MaxPasswordHashBytes {
		return fmt.Errorf("password hash of %d bytes, at most %d", n, MaxPasswordHashBytes)
	}
	return nil
}

// keyParts are the strings of a key record that become keys (and its
// name).
func keyParts(k *raftv1.Key) []string {
	return []string{k.GetId(), k.GetAccountId(), k.GetName(), string(k.GetHash())}
}

// checkSmall checks an operation of one of the small commands: its size,
// and each of the strings that become (part of) a key.
func checkSmall(what string, op proto.Message, keyStrings ...string) error {
	if n := proto.Size(op); n > MaxCommandBytes {
		return fmt.Errorf("%s: %d bytes, at most %d", what, n, MaxCommandBytes)
	}
	for i, s := range keyStrings {
		if len(s) > MaxKeyPartBytes {
			return fmt.Errorf("%s: field %d of %d bytes, at most %d", what, i, len(s), MaxKeyPartBytes)
		}
	}
	return nil
}

// checkPutMonitors bounds a PutMonitors: its monitors, its size, and the
// strings that become keys.
func checkPutMonitors(c *raftv1.PutMonitors) error {
	if n := len(c.GetCreates()) + len(c.GetUpdates()); n > MaxPutMonitors {
		return fmt.Errorf("put monitors: %d monitors, at most %d", n, MaxPutMonitors)
	}
	if n := proto.Size(c); n > MaxPutMonitorsBytes {
		return fmt.Errorf("put monitors: %d bytes, at most %d", n, MaxPutMonitorsBytes)
	}
	if len(c.GetAccountId()) > MaxKeyPartBytes {
		return fmt.Errorf("put monitors: account id of %d bytes, at most %d", len(c.GetAccountId()), MaxKeyPartBytes)
	}
	all := append(append([]*raftv1.MonitorSpec{}, c.GetCreates()...), c.GetUpdates()...)
	for i, s := range all {
		for _, f := range []string{s.GetUuid(), s.GetKind(), s.GetName(), s.GetNotificationGroup()} {
			if len(f) > MaxKeyPartBytes {
				return fmt.Errorf("put monitors: monitor %d has a field of %d bytes, at most %d", i, len(f), MaxKeyPartBytes)
			}
		}
		if len(s.GetProject()) > MaxProjectBytes {
			return fmt.Errorf("put monitors: monitor %d has a project of %d bytes, at most %d", i, len(s.GetProject()), MaxProjectBytes)
		}
		if len(s.GetDependsOn()) > MaxDependencies {
			return fmt.Errorf("put monitors: monitor %d depends on %d monitors, at most %d", i, len(s.GetDependsOn()), MaxDependencies)
		}
		for _, d := range s.GetDependsOn() {
			if len(d.GetKind())+len(d.GetName()) > MaxKeyPartBytes {
				return fmt.Errorf("put monitors: monitor %d depends on a name of %d bytes, at most %d", i, len(d.GetName()), MaxKeyPartBytes)
			}
		}
	}
	return nil
}

// checkIngestBatch bounds an IngestBatch: its events, its size and the
// strings that become keys.
func checkIngestBatch(b *raftv1.IngestBatch) error {
	if n := len(b.GetEvents()); n > IngestBatchMaxEvents {
		return fmt.Errorf("ingest batch: %d events, at most %d", n, IngestBatchMaxEvents)
	}
	if n := proto.Size(b); n > IngestBatchMaxBytes {
		return fmt.Errorf("ingest batch: %d bytes, at most %d", n, IngestBatchMaxBytes)
	}
	for i, ev := range b.GetEvents() {
		for _, f := range []string{ev.GetAccountId(), ev.GetMonitor(), ev.GetEventId()} {
			if len(f) > MaxKeyPartBytes {
				return fmt.Errorf("ingest batch: event %d has a field of %d bytes, at most %d", i, len(f), MaxKeyPartBytes)
			}
		}
		if len(ev.GetProject()) > MaxProjectBytes {
			return fmt.Errorf("ingest batch: event %d has a project of %d bytes, at most %d", i, len(ev.GetProject()), MaxProjectBytes)
		}
	}
	return nil
}

// tooLarge is the result of a command over its bounds.
func tooLarge(err error) *raftv1.Result {
	return &raftv1.Result{Status: raftv1.Status_STATUS_INVALID, Code: CodeCommandTooLarge, Message: err.Error()}
}
