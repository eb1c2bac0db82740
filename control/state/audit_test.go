package state

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

var (
	operatorActor = &raftv1.Actor{Type: ActorOperator, Name: ActorOperator}
	userActor     = &raftv1.Actor{Type: ActorUser, Id: "u-1", Name: "ann@example.com"}
	keyActor      = &raftv1.Actor{Type: ActorKey, Id: "k-ci", Name: "ci"}
)

// by sets the actor of c.
func by(a *raftv1.Actor, c *raftv1.Command) *raftv1.Command {
	c.Actor = a
	return c
}

// auditOf is the account's whole audit log, newest first.
func auditOf(t *testing.T, s *Store, acct string) []*statev1.AuditEntry {
	t.Helper()
	es, err := s.AuditLog(acct, nil, AuditFilter{}, MaxAuditEntries+1)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return es
}

// diffOf decodes an entry's diff.
func diffOf(t *testing.T, e *statev1.AuditEntry) map[string][2]any {
	t.Helper()
	d := map[string][2]any{}
	if len(e.GetDiffJson()) > 0 {
		if err := json.Unmarshal(e.GetDiffJson(), &d); err != nil {
			t.Fatalf("diff %s: %v", e.GetDiffJson(), err)
		}
	}
	return d
}

func signIn(acct string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_RecordSignIn{RecordSignIn: &raftv1.RecordSignIn{AccountId: acct, Method: "password"}}})
}

func applyCmd(acct string, creates, updates []*raftv1.MonitorSpec) *raftv1.Command {
	c := putMonitorsCmd(acct, creates, updates)
	c.GetPutMonitors().Apply = true
	return c
}

// TestAuditEntryPerChange: every kind of change writes one entry in its
// account's log with the command's actor, the action, the target and what
// changed; a change that changes nothing writes none.
func TestAuditEntryPerChange(t *testing.T) {
	const pausedUUID = "7a1d3c6e-1111-4a2b-9c3d-000000000001"
	s := openStore(t)
	mon := minimalPings(1)[0]
	changed := minimalPings(1)[0]
	changed.TimeoutSeconds, changed.Tags = 120, []string{"nightly"}
	applied := minimalPings(1)[0]
	applied.TimeoutSeconds = 300
	type want struct {
		action, kind, uuid, name string
		actor                    *raftv1.Actor
		diff                     map[string][2]any // fields checked (a subset)
	}
	steps := []struct {
		name string
		c    *raftv1.Command
		want *want // nil: no entry
	}{
		{"account created", by(operatorActor, newAccount("a")),
			&want{"account.create", AuditAccount, "a", "a@example.com", operatorActor, map[string][2]any{"email": {nil, "a@example.com"}, "plan": {nil, "free"}, "password": {nil, true}}}},
		{"plan", by(operatorActor, setPlan("a", plan("pro"))),
			&want{"plan.update", AuditAccount, "a", "a@example.com", operatorActor, map[string][2]any{"name": {"free", "pro"}}}},
		{"same plan again", by(operatorActor, setPlan("a", plan("pro"))), nil},
		{"password", by(operatorActor, setPassword("a", []byte("bcrypt-new"))),
			&want{"password.set", AuditAccount, "a", "a@example.com", operatorActor, nil}},
		{"password removed", by(operatorActor, setPassword("a", nil)),
			&want{"password.remove", AuditAccount, "a", "a@example.com", operatorActor, nil}},
		{"key", by(userActor, createKey(&raftv1.Key{Id: "k2", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "deploy", Scopes: []string{"read", "write"}, Hash: []byte("hash-k2")})),
			&want{"key.create", AuditKey, "k2", "deploy", userActor, map[string][2]any{"name": {nil, "deploy"}, "type": {nil, "management"}, "scopes": {nil, []any{"read", "write"}}}}},
		{"key revoked", by(userActor, revokeKey("a", "k2")),
			&want{"key.revoke", AuditKey, "k2", "deploy", userActor, map[string][2]any{"name": {"deploy", nil}}}},
		{"channel", by(userActor, createChannelCmd("a", "c1", true)),
			&want{"channel.create", AuditChannel, "c1", "c1", userActor, map[string][2]any{"type": {nil, "webhook"}, "config.url": {nil, "https://example.com/****hook"}, "config.secret": {nil, "****cmV0"}}}},
		{"channel renamed", by(keyActor, updateChannelCmd("a", "c1", "webhook", "ops hook", `{"url":"https://example.com/hook","secret":"whsec_c2VjcmV0"}`, true)),
			&want{"channel.update", AuditChannel, "c1", "ops hook", keyActor, map[string][2]any{"name": {"c1", "ops hook"}}}},
		{"channel saved unchanged", by(keyActor, updateChannelCmd("a", "c1", "webhook", "ops hook", `{"url":"https://example.com/hook","secret":"whsec_c2VjcmV0"}`, true)), nil},
		{"channel deleted", by(keyActor, deleteChannelCmd("a", "c1")),
			&want{"channel.delete", AuditChannel, "c1", "ops hook", keyActor, map[string][2]any{"name": {"ops hook", nil}}}},
		{"group", by(userActor, createGroup("a", "g1", "ops", []byte(`[{"type":"slack","config":{"webhook_url":"https://hooks.slack.com/services/T0/B0/abcdefsecret"}}]`))),
			&want{"notification_group.create", AuditGroup, "g1", "ops", userActor, map[string][2]any{"name": {nil, "ops"},
				"channels": {nil, []any{map[string]any{"type": "slack", "config": map[string]any{"webhook_url": "https://hooks.slack.com/****cret"}}}}}}},
		{"group renamed", by(userActor, updateGroupCmd("a", "g1", "oncall", `[]`)),
			&want{"notification_group.update", AuditGroup, "g1", "oncall", userActor, map[string][2]any{"name": {"ops", "oncall"}}}},
		{"group deleted", by(userActor, deleteGroupCmd("a", "g1")),
			&want{"notification_group.delete", AuditGroup, "g1", "oncall", userActor, nil}},
		{"monitor created", by(userActor, putMonitorsCmd("a", []*raftv1.MonitorSpec{mon}, nil)),
			&want{"create", AuditMonitor, mon.Uuid, "m0", userActor, map[string][2]any{"kind": {nil, "ping"}, "name": {nil, "m0"}, "enabled": {nil, true}, "timeout_seconds": {nil, float64(60)}}}},
		{"monitor updated", by(keyActor, putMonitorsCmd("a", nil, []*raftv1.MonitorSpec{changed})),
			&want{"update", AuditMonitor, mon.Uuid, "m0", keyActor, map[string][2]any{"timeout_seconds": {float64(60), float64(120)}, "tags": {[]any{}, []any{"nightly"}}}}},
		{"monitor put unchanged", by(keyActor, putMonitorsCmd("a", nil, []*raftv1.MonitorSpec{changed})), nil},
		{"monitor applied", by(keyActor, applyCmd("a", nil, []*raftv1.MonitorSpec{applied})),
			&want{"apply", AuditMonitor, mon.Uuid, "m0", keyActor, map[string][2]any{"timeout_seconds": {float64(120), float64(300)}, "tags": {[]any{"nightly"}, []any{}}}}},
		{"monitor deleted", by(userActor, deleteMonitor("a", mon.Uuid)),
			&want{"delete", AuditMonitor, mon.Uuid, "m0", userActor, map[string][2]any{"kind": {"ping", nil}, "name": {"m0", nil}}}},
		{"monitor made by a ping", ingestAt(t0, 0, ping("a", "backup", "complete", t0, withKey("ik"))),
			&want{"create", AuditMonitor, "", "backup", &raftv1.Actor{Type: ActorKey, Id: "ik", Name: "name-ik"}, map[string][2]any{"name": {nil, "backup"}, "kind": {nil, "ping"}}}},
		{"a ping to it", ingestAt(t0, 0, ping("a", "backup", "complete", t0+1, withKey("ik"))), nil},
		{"badge key", by(userActor, setBadgeKey("a", "badge-secret-1", false)),
			&want{"badge_key.regenerate", AuditAccount, "a", "a@example.com", userActor, nil}},
		{"badge key at first read", setBadgeKey("a", "badge-secret-2", true), nil},
		{"status page", by(userActor, putStatusPage("a", "acme", true, &raftv1.StatusPageMatch{Tags: []string{"public"}})),
			&want{"status_page.update", AuditStatusPage, "", "acme", userActor, map[string][2]any{"slug": {nil, "acme"}, "match.tags": {nil, []any{"public"}}}}},
		{"status page unchanged", by(userActor, putStatusPage("a", "acme", true, &raftv1.StatusPageMatch{Tags: []string{"public"}})), nil},
		{"sign-in", by(userActor, signIn("a")),
			&want{"sign_in", AuditUser, "u-1", "ann@example.com", userActor, map[string][2]any{"method": {nil, "password"}}}},
		{"sign-out", by(userActor, endSession("sess-1", "a", t0+3600_000)),
			&want{"sign_out", AuditUser, "u-1", "ann@example.com", userActor, nil}},
		{"signed out again", by(userActor, endSession("sess-1", "a", t0+3600_000)), nil},
		{"monitor to pause", by(userActor, putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: pausedUUID, Kind: KindPing, Name: "paused-job", Enabled: true, TimeoutSeconds: 60}}, nil)),
			&want{"create", AuditMonitor, pausedUUID, "paused-job", userActor, map[string][2]any{"name": {nil, "paused-job"}}}},
		{"pause", by(userActor, pauseCmd("a", pausedUUID, t0, t0+hour, "patching")),
			&want{"pause", AuditMonitor, pausedUUID, "paused-job", userActor, map[string][2]any{"paused": {nil, true}, "reason": {nil, "patching"}}}},
		{"resume", by(userActor, resumeCmd("a", pausedUUID, t0+60_000)),
			&want{"resume", AuditMonitor, pausedUUID, "paused-job", userActor, map[string][2]any{"paused": {true, false}}}},
		{"resumed again", by(userActor, resumeCmd("a", pausedUUID, t0+120_000)), nil},
		{"maintenance window", by(keyActor, putWindowCmd(t0, true, oneOff("w1", t0+day, t0+day+hour, &raftv1.WindowMatch{Tags: []string{"db"}}))),
			&want{"maintenance_window.create", AuditWindow, "w1", "patching", keyActor, map[string][2]any{"name": {nil, "patching"}, "match.tags": {nil, []any{"db"}}}}},
		{"maintenance window deleted", by(keyActor, deleteWindowCmd(t0, "a", "w1")),
			&want{"maintenance_window.delete", AuditWindow, "w1", "patching", keyActor, map[string][2]any{"name": {"patching", nil}}}},
		{"user", by(operatorActor, addUser("a", "u-2", "bob@example.com", "editor")),
			&want{"user.add", AuditUser, "u-2", "bob@example.com", operatorActor, map[string][2]any{"email": {nil, "bob@example.com"}, "role": {nil, "editor"}}}},
		{"role", by(userActor, setRole("a", "u-2", "viewer")),
			&want{"user.update", AuditUser, "u-2", "bob@example.com", userActor, map[string][2]any{"role": {"editor", "viewer"}}}},
		{"password reset", by(operatorActor, setUserPassword("a", "u-2", []byte("bcrypt-secret"))),
			&want{"user.update", AuditUser, "u-2", "bob@example.com", operatorActor, map[string][2]any{"password": {nil, "set"}}}},
		{"user removed", by(userActor, removeUser("a", "u-2")),
			&want{"user.remove", AuditUser, "u-2", "bob@example.com", userActor, map[string][2]any{"role": {"viewer", nil}}}},
		{"invite", by(userActor, createInvite("a", "i-1", "tok", "carol@example.com", "viewer", t0+7*day)),
			&want{"invite.create", AuditInvite, "i-1", "carol@example.com", userActor, map[string][2]any{"role": {nil, "viewer"}}}},
		{"invite revoked", by(userActor, revokeInvite("a", "i-1")),
			&want{"invite.revoke", AuditInvite, "i-1", "", userActor, nil}},
		// Refused commands and the leader's own work write nothing.
		{"refused: name taken", by(userActor, putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: "u-x", Kind: KindPing, Name: "backup", Enabled: true}}, nil)), nil},
		{"refused: no such key", by(userActor, revokeKey("a", "nope")), nil},
		{"key used", recordKeyUsed("a", "mk", t0+2*60*60*1000), nil},
		{"prune", pruneEvents(t0-1, 100), nil},
	}
	seen := 0
	for _, step := range steps {
		res := apply(t, s, step.c)[0]
		log := auditOf(t, s, "a")
		if step.want == nil {
			if len(log) != seen {
				t.Errorf("%s (%v): %d entries, want %d: %v", step.name, res.GetStatus(), len(log), seen, log[0])
				seen = len(log)
			}
			continue
		}
		if len(log) != seen+1 {
			t.Fatalf("%s (%v %s): %d entries, want %d", step.name, res.GetStatus(), res.GetMessage(), len(log), seen+1)
		}
		seen++
		e, w := log[0], step.want
		if e.GetAction() != w.action || e.GetTarget().GetKind() != w.kind || (w.uuid != "" && e.GetTarget().GetUuid() != w.uuid) || e.GetTarget().GetName() != w.name {
			t.Errorf("%s: entry %s %v, want %s %s %s %s", step.name, e.GetAction(), e.GetTarget(), w.action, w.kind, w.uuid, w.name)
		}
		if a := e.GetActor(); a.GetType() != w.actor.GetType() || a.GetId() != w.actor.GetId() || a.GetName() != w.actor.GetName() {
			t.Errorf("%s: actor %v, want %v", step.name, a, w.actor)
		}
		if e.GetAtUnixMs() != step.c.GetTimeUnixMs() || e.GetRaftIndex() != s.AppliedIndex() {
			t.Errorf("%s: at %d index %d, want the command's %d and %d", step.name, e.GetAtUnixMs(), e.GetRaftIndex(), step.c.GetTimeUnixMs(), s.AppliedIndex())
		}
		d := diffOf(t, e)
		for f, v := range w.diff {
			if !reflect.DeepEqual(d[f], v) {
				t.Errorf("%s: diff %s = %#v, want %#v (diff %s)", step.name, f, d[f], v, e.GetDiffJson())
			}
		}
	}
}

// TestAuditShowsNoSecret: keys' hashes, passwords' hashes, badge keys and
// the secrets of channel configs are nowhere in an audit log.
func TestAuditShowsNoSecret(t *testing.T) {
	s := openStore(t)
	secrets := []string{"hash-a-ik", "hash-a-mk", "bcrypt-a", "hash-k9", "bcrypt-changed", "badge-capability",
		"whsec_c2VjcmV0", "T0/B0/abcdefsecret", "xoxb-bottoken", "smtp-password-1"}
	mustOK(t, s,
		by(operatorActor, newAccount("a")),
		by(operatorActor, setPassword("a", []byte("bcrypt-changed"))),
		by(userActor, createKey(&raftv1.Key{Id: "k9", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "cron", Hash: []byte("hash-k9")})),
		by(userActor, revokeKey("a", "k9")),
		by(userActor, setBadgeKey("a", "badge-capability", false)),
		by(userActor, createChannelCmd("a", "c1", true)),
		by(userActor, updateChannelCmd("a", "c1", "webhook", "hook", `{"url":"https://example.com/hook","secret":"whsec_c2VjcmV0-rotated","headers":{"X-Token":"xoxb-bottoken"}}`, true)),
		by(userActor, deleteChannelCmd("a", "c1")),
		by(userActor, createGroup("a", "g1", "ops", []byte(`[{"type":"slack","config":{"webhook_url":"https://hooks.slack.com/services/T0/B0/abcdefsecret"}},{"type":"email","config":{"to":"ops@example.com","password":"smtp-password-1"}}]`))),
		by(userActor, updateGroupCmd("a", "g1", "ops", `[]`)),
	)
	log := auditOf(t, s, "a")
	if len(log) != 10 {
		t.Fatalf("%d entries, want 10", len(log))
	}
	for key, v := range dumpKV(t, s, false) {
		if !strings.HasPrefix(key, "audit") {
			continue
		}
		for _, secret := range secrets {
			if strings.Contains(v, secret) || strings.Contains(key, secret) {
				t.Errorf("%s holds the secret %q: %q", key, secret, v)
			}
		}
	}
}

// TestAuditApplyOneEntryPerChangedMonitor: an apply writes one entry per
// monitor it creates or changes, with the manifest diff, and none for the
// monitors it leaves as they are; the entries of one command share its
// raft index and count up their position.
func TestAuditApplyOneEntryPerChangedMonitor(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ms := minimalPings(3)
	mustOK(t, s, by(keyActor, applyCmd("a", ms, nil)))
	first := auditOf(t, s, "a")
	if len(first) != 4 { // the account's creation and three creates
		t.Fatalf("%d entries, want 4", len(first))
	}
	for i, e := range first[:3] {
		if e.GetAction() != "apply" || e.GetPosition() != uint32(2-i) || e.GetRaftIndex() != s.AppliedIndex() {
			t.Errorf("entry %d: %s at %d.%d", i, e.GetAction(), e.GetRaftIndex(), e.GetPosition())
		}
	}
	again := minimalPings(3)
	again[1].TimeoutSeconds = 90
	mustOK(t, s, by(keyActor, applyCmd("a", nil, again)))
	log := auditOf(t, s, "a")
	if len(log) != 5 {
		t.Fatalf("%d entries after the second apply, want 5", len(log))
	}
	e := log[0]
	if e.GetAction() != "apply" || e.GetTarget().GetName() != "m1" || e.GetPosition() != 0 {
		t.Fatalf("entry %v", e)
	}
	if d := diffOf(t, e); len(d) != 1 || !reflect.DeepEqual(d["timeout_seconds"], [2]any{float64(60), float64(90)}) {
		t.Fatalf("diff %s", e.GetDiffJson())
	}
}

// fillAudit writes n entries of the account straight into the store, as
// if made at time at by the n raft entries after the applied index (which
// moves past them).
func fillAudit(t *testing.T, s *Store, acct string, n int, at int64) {
	t.Helper()
	first := s.AppliedIndex() + 1
	count := auditCount(t, s, acct)
	for from := 0; from < n; from += 1000 {
		txn := s.db().NewTransaction(true)
		for i := from; i < min(n, from+1000); i++ {
			e := &statev1.AuditEntry{RaftIndex: first + uint64(i), AtUnixMs: at, Actor: userActor, Action: "update",
				Target: &statev1.AuditTarget{Kind: AuditMonitor, Uuid: fmt.Sprint("old-", i), Name: "old"}, DiffJson: []byte(`{"timeout_seconds":[60,120]}`)}
			if err := setProto(txn, auditKey(acct, AuditPosOf(e)), e); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	txn := s.db().NewTransaction(true)
	defer txn.Discard()
	if count == 0 {
		if err := txn.Set(auditDueKey(at, acct), nil); err != nil {
			t.Fatal(err)
		}
	}
	last := first + uint64(n) - 1
	if err := txn.Set(k(prefixAuditCount, acct), u64(count+uint64(n))); err != nil {
		t.Fatal(err)
	}
	if err := txn.Set(keyApplied, u64(last)); err != nil {
		t.Fatal(err)
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	s.setApplied(last)
}

// auditCount is the account's stored count of entries.
func auditCount(t *testing.T, s *Store, acct string) uint64 {
	t.Helper()
	var n uint64
	if err := s.view(func(txn *badger.Txn) (err error) { n, err = readUint64(txn, k(prefixAuditCount, acct)); return err }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAuditBoundPerAccount: an account keeps its newest MaxAuditEntries
// entries; the change that goes past the bound drops the oldest in its own
// transaction, and other accounts keep theirs.
func TestAuditBoundPerAccount(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b")) // one entry each, at indexes 1 and 2
	fillAudit(t, s, "a", MaxAuditEntries-1, t0-1)  // indexes 3 to 10,001
	if n := auditCount(t, s, "a"); n != MaxAuditEntries {
		t.Fatalf("count %d", n)
	}
	mustOK(t, s, by(keyActor, applyCmd("a", minimalPings(5), nil)))
	log := auditOf(t, s, "a")
	if len(log) != MaxAuditEntries || auditCount(t, s, "a") != MaxAuditEntries {
		t.Fatalf("%d entries, count %d, want %d", len(log), auditCount(t, s, "a"), MaxAuditEntries)
	}
	for i, e := range log[:5] {
		if e.GetAction() != "apply" || e.GetTarget().GetName() != fmt.Sprint("m", 4-i) {
			t.Fatalf("newest %d: %v", i, e)
		}
	}
	// The five oldest (indexes 1, 3 to 6) are gone.
	if oldest := log[len(log)-1]; oldest.GetRaftIndex() != 7 {
		t.Fatalf("oldest kept at index %d, want 7", oldest.GetRaftIndex())
	}
	if b := auditOf(t, s, "b"); len(b) != 1 || b[0].GetAction() != "account.create" {
		t.Fatalf("account b: %v", b)
	}
}

// TestAuditRetention: PruneEvents deletes the entries made before its
// audit cut-off, oldest first, at most its max an entry (reporting max
// while some are left), keeps the newer ones and the count right, and
// deletes nothing of the audit log without a cut-off.
func TestAuditRetention(t *testing.T) {
	s := openStore(t)
	const day = 24 * 60 * 60 * 1000
	fillAudit(t, s, "a", 250, t0-100*day)
	mustOK(t, s, by(operatorActor, cmd(&raftv1.Command{TimeUnixMs: t0 - 10*day, Op: newAccount("a").Op})))
	mustOK(t, s, by(operatorActor, cmd(&raftv1.Command{TimeUnixMs: t0 - 100*day, Op: newAccount("b").Op})))
	prune := func(auditBefore, max int64) *raftv1.Result {
		t.Helper()
		c := pruneEvents(t0-200*day, max)
		c.GetPruneEvents().AuditBeforeUnixMs = auditBefore
		res := apply(t, s, c)[0]
		if res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("prune: %v %s", res.GetStatus(), res.GetMessage())
		}
		return res
	}
	if res := prune(0, 1000); res.GetPruned().GetAudit() != 0 || len(auditOf(t, s, "a")) != 251 {
		t.Fatalf("pruned %d without a cut-off", res.GetPruned().GetAudit())
	}
	cut := t0 - 90*day
	total := int64(0)
	for i := 0; ; i++ {
		res := prune(cut, 100)
		total += res.GetPruned().GetAudit()
		if res.GetDeleted() < 100 {
			break
		}
		if i > 5 {
			t.Fatal("pruning does not end")
		}
	}
	if total != 251 {
		t.Fatalf("pruned %d entries, want 251 (250 of a, 1 of b)", total)
	}
	log := auditOf(t, s, "a")
	if len(log) != 1 || log[0].GetAction() != "account.create" || auditCount(t, s, "a") != 1 {
		t.Fatalf("a keeps %v, count %d", log, auditCount(t, s, "a"))
	}
	if len(auditOf(t, s, "b")) != 0 || auditCount(t, s, "b") != 0 || len(keysWithPrefix(t, s, []byte("audit-n:b"))) != 0 {
		t.Fatal("b's entries or count left")
	}
	// a's due key moved to its oldest kept entry; b's went with its last.
	if due := keysWithPrefix(t, s, prefixAuditDue); len(due) != 1 || due[0] != string(auditDueKey(t0-10*day, "a")) {
		t.Fatalf("due keys %q", due)
	}
	if res := prune(cut, 100); res.GetPruned().GetAudit() != 0 {
		t.Fatalf("pruned %d more", res.GetPruned().GetAudit())
	}
}

// TestAuditLogPagesAndFilters: newest first, a page below a position, and
// the filters by actor (id, name or type), monitor (uuid or name) and
// action.
func TestAuditLogPagesAndFilters(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, by(operatorActor, newAccount("a")))
	ms := minimalPings(3)
	mustOK(t, s, by(keyActor, applyCmd("a", ms, nil)))
	mustOK(t, s, by(userActor, deleteMonitor("a", ms[0].Uuid)))
	mustOK(t, s, by(userActor, createKey(key("a", "k3", raftv1.KeyType_KEY_TYPE_MANAGEMENT))))
	names := func(es []*statev1.AuditEntry) string {
		var out []string
		for _, e := range es {
			out = append(out, e.GetAction()+":"+e.GetTarget().GetName())
		}
		return strings.Join(out, " ")
	}
	all := auditOf(t, s, "a")
	if got := names(all); got != "key.create:name-k3 delete:m0 apply:m2 apply:m1 apply:m0 account.create:a@example.com" {
		t.Fatalf("log %s", got)
	}
	page, err := s.AuditLog("a", nil, AuditFilter{}, 2)
	if err != nil || names(page) != "key.create:name-k3 delete:m0" {
		t.Fatalf("first page %s %v", names(page), err)
	}
	pos := AuditPosOf(page[1])
	page, err = s.AuditLog("a", &pos, AuditFilter{}, 3)
	if err != nil || names(page) != "apply:m2 apply:m1 apply:m0" {
		t.Fatalf("second page %s %v", names(page), err)
	}
	for _, tc := range []struct {
		f    AuditFilter
		want string
	}{
		{AuditFilter{Actor: "ci"}, "apply:m2 apply:m1 apply:m0"},
		{AuditFilter{Actor: "k-ci"}, "apply:m2 apply:m1 apply:m0"},
		{AuditFilter{Actor: "operator"}, "account.create:a@example.com"},
		{AuditFilter{Actor: "ann@example.com"}, "key.create:name-k3 delete:m0"},
		{AuditFilter{Actor: "user"}, "key.create:name-k3 delete:m0"},
		{AuditFilter{Monitor: "m0"}, "delete:m0 apply:m0"},
		{AuditFilter{Monitor: ms[1].Uuid}, "apply:m1"},
		{AuditFilter{Action: "apply"}, "apply:m2 apply:m1 apply:m0"},
		{AuditFilter{Action: "apply", Monitor: "m0", Actor: "ci"}, "apply:m0"},
		{AuditFilter{Action: "key.revoke"}, ""},
		{AuditFilter{Monitor: "name-k3"}, ""}, // a key is no monitor
	} {
		got, err := s.AuditLog("a", nil, tc.f, 100)
		if err != nil || names(got) != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.f, names(got), err, tc.want)
		}
	}
	if other, _ := s.AuditLog("b", nil, AuditFilter{}, 100); len(other) != 0 {
		t.Fatalf("another account sees %v", other)
	}
}

// TestAuditEntriesAreBounded: the diff of an entry is cut to its bounds
// (values, then the whole diff), the target's name too, so that the
// entries of a large apply stay small.
func TestAuditEntriesAreBounded(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	spec := fullSpec(1, 16<<10)
	mustOK(t, s, by(keyActor, putMonitorsCmd("a", []*raftv1.MonitorSpec{spec}, nil)))
	e := auditOf(t, s, "a")[0]
	if n := len(e.GetDiffJson()); n > maxAuditDiffBytes+1024 {
		t.Fatalf("diff of %d bytes", n)
	}
	if n := len(e.GetTarget().GetName()); n > maxAuditValueBytes+len(cutMark) || !strings.HasSuffix(e.GetTarget().GetName(), cutMark) {
		t.Fatalf("target name of %d bytes: %q", n, e.GetTarget().GetName())
	}
	d := diffOf(t, e)
	if v, _ := d["config.url"][1].(string); len(v) > maxAuditValueBytes+len(cutMark) || !strings.HasPrefix(v, "https://example.com/") {
		t.Fatalf("url %q", v)
	}
	if !reflect.DeepEqual(d["tags"], [2]any{cutMark, cutMark}) && !strings.HasSuffix(fmt.Sprint(d["tags"][1]), cutMark) {
		t.Fatalf("tags %v", d["tags"])
	}
}
