package state

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// The codes a refused PutMonitors carries (the Management API's 422 codes).
const (
	CodeNameAlreadyExists     = "name_already_exists"
	CodeNameTakenByOtherKind  = "name_taken_by_other_kind"
	CodePlanLimitReached      = "plan_limit_reached"
	CodeKindMismatch          = "kind_mismatch"
	CodeNameImmutable         = "name_immutable"
	CodeNotificationGroupGone = "notification_group_invalid"
)

// refused is a PutMonitors result naming the entry at fault and its code.
func refused(entry int, code, format string, a ...any) *raftv1.Result {
	return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: code, Entry: int64(entry), Message: fmt.Sprintf(format, a...)}
}

// putMonitorIn writes a monitor record through the apply's value cache.
func putMonitorIn(txn *badger.Txn, values *valueCache, m *statev1.Monitor) error {
	v, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return err
	}
	return values.set(txn, monitorKey(m.GetUuid()), v)
}

// checkKinds are the kinds of check, which share one name space.
var checkKinds = []string{KindHTTPCheck, KindSSLCheck, KindTCPCheck, KindDNSCheck}

// nameSpace lists the kinds sharing kind's name space, kind first.
func nameSpace(kind string) []string {
	if !slices.Contains(checkKinds, kind) {
		return []string{kind}
	}
	out := []string{kind}
	for _, k := range checkKinds {
		if k != kind {
			out = append(out, k)
		}
	}
	return out
}

// nameOwner returns the uuid of the account's monitor that holds name in
// kind's name space ("" when free) and the code of a clash.
func nameOwner(txn *badger.Txn, values *valueCache, accountID, kind, name string) (string, string, error) {
	for _, k := range nameSpace(kind) {
		id, err := values.get(txn, monitorNameKey(accountID, k, name))
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		code := CodeNameAlreadyExists
		if k != kind {
			code = CodeNameTakenByOtherKind
		}
		return string(id), code, nil
	}
	return "", "", nil
}

// applyPutMonitors creates and replaces monitors of one account as one
// change: every rule is checked first (names free, kinds and ping names
// unchanged, notification groups present, the plan's monitor limit), and a
// refusal writes nothing and names the entry (creates first, then
// updates) and its code.
func applyPutMonitors(txn *badger.Txn, ctx applyCtx, c *raftv1.PutMonitors) (*raftv1.Result, error) {
	acct, gone, err := readAccount(txn, c.GetAccountId())
	if gone != nil || err != nil {
		return gone, err
	}
	creates, updates := c.GetCreates(), c.GetUpdates()
	seen := map[string]int{} // name space and name -> entry, within the command
	space := func(kind, name string) string {
		if kind == KindPing {
			return "ping\x00" + name
		}
		return "check\x00" + name
	}
	for i, s := range creates {
		if s.GetUuid() == "" || s.GetName() == "" || !knownKind(s.GetKind()) {
			return invalid("put monitors: entry %d needs uuid, name and a known kind", i), nil
		}
		if found, err := exists(txn, monitorKey(s.GetUuid())); err != nil || found {
			return invalid("put monitors: monitor %s exists", s.GetUuid()), err
		}
		if _, dup := seen[space(s.GetKind(), s.GetName())]; dup {
			return refused(i, CodeNameAlreadyExists, "two monitors named %q", s.GetName()), nil
		}
		seen[space(s.GetKind(), s.GetName())] = i
		owner, code, err := nameOwner(txn, ctx.values, acct.GetId(), s.GetKind(), s.GetName())
		if err != nil {
			return nil, err
		}
		if owner != "" {
			return refused(i, code, "a monitor named %q exists", s.GetName()), nil
		}
	}
	stored := make([]*statev1.Monitor, len(updates))
	for j, s := range updates {
		entry := len(creates) + j
		m, err := getMonitorIn(txn, ctx.values, s.GetUuid())
		if errors.Is(err, ErrNotFound) || (err == nil && m.GetAccountId() != acct.GetId()) {
			return &raftv1.Result{Status: raftv1.Status_STATUS_NOT_FOUND, Entry: int64(entry), Message: "monitor " + s.GetUuid() + " not found"}, nil
		}
		if err != nil {
			return nil, err
		}
		if s.GetKind() != m.GetKind() {
			return refused(entry, CodeKindMismatch, "monitor %s is a %s, not a %s", m.GetUuid(), m.GetKind(), s.GetKind()), nil
		}
		if m.GetKind() == KindPing && s.GetName() != m.GetName() {
			return refused(entry, CodeNameImmutable, "the name of ping monitor %q cannot change", m.GetName()), nil
		}
		if _, dup := seen[space(s.GetKind(), s.GetName())]; dup {
			return refused(entry, CodeNameAlreadyExists, "two monitors named %q", s.GetName()), nil
		}
		seen[space(s.GetKind(), s.GetName())] = entry
		if s.GetName() != m.GetName() {
			owner, code, err := nameOwner(txn, ctx.values, acct.GetId(), s.GetKind(), s.GetName())
			if err != nil {
				return nil, err
			}
			if owner != "" && owner != m.GetUuid() {
				return refused(entry, code, "a monitor named %q exists", s.GetName()), nil
			}
		}
		stored[j] = m
	}
	all := append(append([]*raftv1.MonitorSpec{}, creates...), updates...)
	for i, s := range all {
		if g := s.GetNotificationGroup(); g != "" {
			if found, err := exists(txn, k(prefixGroupName, acct.GetId(), g)); err != nil || !found {
				return refused(i, CodeNotificationGroupGone, "no notification group %q", g), err
			}
		}
	}
	count, err := readUint64(txn, monitorCountKey(acct.GetId()))
	if err != nil {
		return nil, err
	}
	if limit, has := monitorLimit(acct.GetPlan()); has && int64(count)+int64(len(creates)) > limit {
		entry := max(0, int(limit-int64(count)))
		return refused(entry, CodePlanLimitReached, "the plan allows %d monitors", limit), nil
	}

	// Every rule holds: write.
	for _, s := range creates {
		m := &statev1.Monitor{Uuid: s.GetUuid(), AccountId: acct.GetId(), CreatedUnixMs: ctx.now}
		if s.GetKind() == KindPing {
			m.Ping = &statev1.PingState{}
		}
		if err := writeSpec(txn, ctx, m, s, true); err != nil {
			return nil, err
		}
	}
	if len(creates) > 0 {
		if err := txn.Set(monitorCountKey(acct.GetId()), u64(count+uint64(len(creates)))); err != nil {
			return nil, err
		}
	}
	for j, s := range updates {
		if err := writeSpec(txn, ctx, stored[j], s, false); err != nil {
			return nil, err
		}
	}
	return ok(), nil
}

// writeSpec replaces m's manifest fields with s (keeping its identity,
// creation time and ping state) and writes it with its name index.
func writeSpec(txn *badger.Txn, ctx applyCtx, m *statev1.Monitor, s *raftv1.MonitorSpec, created bool) error {
	oldName := m.GetName()
	var uptime *uptimeChange
	verdict := ""
	if !created && m.GetEnabled() != s.GetEnabled() {
		// Paused or resumed: what its time counts as may change now.
		if m.GetKind() != KindPing {
			cs, err := getCheckStatus(txn, ctx.values, m.GetUuid())
			if err != nil {
				return err
			}
			verdict = cs.GetVerdict()
		}
		c := beforeChange(m, verdict)
		uptime = &c
	}
	switched := created && !s.GetEnabled() || !created && s.GetEnabled() != m.GetEnabled()
	if s.GetKind() == KindPing && switched {
		// Paused at once when disabled, judged afresh when enabled again.
		setPingState(m, pingstate.SetEnabled(PingState(m), s.GetEnabled(), ctx.now))
	}
	m.Kind, m.Name, m.Enabled = s.GetKind(), s.GetName(), s.GetEnabled()
	m.Tags, m.NotificationGroup = s.GetTags(), s.GetNotificationGroup()
	m.DisplayName, m.TimeoutSeconds = s.GetDisplayName(), s.GetTimeoutSeconds()
	m.ExpectedIntervalSeconds, m.GraceSeconds = s.ExpectedIntervalSeconds, s.GraceSeconds
	m.Schedule, m.Timezone, m.Regions, m.Config = s.GetSchedule(), s.GetTimezone(), s.GetRegions(), s.GetConfig()
	m.ConfirmRegions = s.GetConfirmRegions()
	m.FailureThreshold = s.GetFailureThreshold()
	m.DependsOn = s.GetDependsOn()
	if s.GetRemindEverySeconds() != m.GetRemindEverySeconds() {
		m.RemindEverySeconds = s.GetRemindEverySeconds()
		remindFrom(m, ctx.now) // a new period counts from now
	}
	m.UpdatedUnixMs = ctx.now
	if s.Project != nil {
		m.Project = s.GetProject()
	}
	if !created && oldName != m.Name {
		if err := ctx.values.del(txn, monitorNameKey(m.GetAccountId(), m.GetKind(), oldName)); err != nil {
			return err
		}
	}
	if created || oldName != m.Name {
		if err := ctx.values.set(txn, monitorNameKey(m.GetAccountId(), m.GetKind(), m.Name), []byte(m.GetUuid())); err != nil {
			return err
		}
	}
	if uptime != nil {
		if err := uptime.after(txn, ctx, verdict, ctx.now); err != nil {
			return err
		}
	}
	return putMonitorIn(txn, ctx.values, m)
}

func knownKind(kind string) bool {
	return kind == KindPing || slices.Contains(checkKinds, kind)
}
