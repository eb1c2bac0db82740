package state

import (
	"bytes"
	"encoding/binary"
	"io"
	"sort"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// t0 is the leader-stamped time of test commands unless a test says otherwise.
const t0 int64 = 1_700_000_000_000

func openStore(t *testing.T) *Store {
	t.Helper()
	return openStoreAt(t, t.TempDir())
}

func openStoreAt(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(Options{Dir: dir, Small: true})
	if err != nil {
		t.Fatalf("open state: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// entries numbers cmds from first on.
func entries(first uint64, cmds ...*raftv1.Command) []Entry {
	out := make([]Entry, len(cmds))
	for i, c := range cmds {
		out[i] = Entry{Index: first + uint64(i), Command: c}
	}
	return out
}

// apply applies cmds at the indexes following the applied index.
func apply(t *testing.T, s *Store, cmds ...*raftv1.Command) []*raftv1.Result {
	t.Helper()
	res := s.ApplyBatch(entries(s.AppliedIndex()+1, cmds...))
	if len(res) != len(cmds) {
		t.Fatalf("ApplyBatch: %d results for %d entries", len(res), len(cmds))
	}
	return res
}

// mustOK applies cmds and requires every result to be OK.
func mustOK(t *testing.T, s *Store, cmds ...*raftv1.Command) {
	t.Helper()
	for i, r := range apply(t, s, cmds...) {
		if r.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("command %d: %v %s", i, r.GetStatus(), r.GetMessage())
		}
	}
}

// dump is the whole state as a snapshot stream; it is deterministic.
func dump(t *testing.T, s *Store) []byte {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	defer snap.Release()
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatalf("write snapshot: %v", err)
	}
	return buf.Bytes()
}

// dumpKV is the state as a key -> value map, optionally without meta:applied.
func dumpKV(t *testing.T, s *Store, withApplied bool) map[string]string {
	t.Helper()
	r := bytes.NewReader(dump(t, s))
	if _, err := io.CopyN(io.Discard, r, int64(len(snapshotMagic)+8)); err != nil {
		t.Fatalf("dump header: %v", err)
	}
	chunk := func() []byte {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			t.Fatalf("dump: %v", err)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatalf("dump: %v", err)
		}
		return b
	}
	out := map[string]string{}
	for {
		key := chunk()
		if len(key) == 0 {
			break
		}
		out[string(key)] = string(chunk())
	}
	if !withApplied {
		delete(out, string(keyApplied))
	}
	return out
}

// keysWithPrefix lists the state's keys starting with prefix, sorted.
func keysWithPrefix(t *testing.T, s *Store, prefix []byte) []string {
	t.Helper()
	var out []string
	for k := range dumpKV(t, s, true) {
		if bytes.HasPrefix([]byte(k), prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func requireSameKV(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if w, ok := after[k]; !ok {
			t.Errorf("key %q disappeared", k)
		} else if w != v {
			t.Errorf("key %q changed", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("key %q appeared", k)
		}
	}
}

// requirePanic runs fn and requires it to panic.
func requirePanic(t *testing.T, name string, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: did not panic", name)
		}
	}()
	fn()
}

// Command builders. Every command is version 1 and stamped t0.

func cmd(c *raftv1.Command) *raftv1.Command {
	c.Version = CommandVersion
	if c.TimeUnixMs == 0 {
		c.TimeUnixMs = t0
	}
	return c
}

func withRID(c *raftv1.Command, rid string, ms int64) *raftv1.Command {
	c.RequestId, c.TimeUnixMs = rid, ms
	return c
}

func key(acct, id string, typ raftv1.KeyType) *raftv1.Key {
	return &raftv1.Key{Id: id, AccountId: acct, Type: typ, Name: "name-" + id, Scopes: []string{"read"}, Hash: []byte("hash-" + acct + "-" + id)}
}

func plan(name string) *raftv1.Plan {
	return &raftv1.Plan{Name: name, IngestRatePerSecond: 5, IngestBurst: 10}
}

func accountOp(id, email string) *raftv1.CreateAccount {
	return &raftv1.CreateAccount{
		AccountId:     id,
		Email:         email,
		PasswordHash:  []byte("bcrypt-" + id),
		Plan:          plan("free"),
		IngestKey:     key(id, "ik", raftv1.KeyType_KEY_TYPE_INGEST),
		ManagementKey: key(id, "mk", raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}
}

func createAccount(op *raftv1.CreateAccount) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: op}})
}

func newAccount(id string) *raftv1.Command { return createAccount(accountOp(id, id+"@example.com")) }

func setPlan(acct string, p *raftv1.Plan) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_SetPlan{SetPlan: &raftv1.SetPlan{AccountId: acct, Plan: p}}})
}

func setPassword(acct string, hash []byte) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_SetPassword{SetPassword: &raftv1.SetPassword{AccountId: acct, PasswordHash: hash}}})
}

func createKey(k *raftv1.Key) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{Key: k}}})
}

func recordKeyUsed(acct, id string, ms int64) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: ms, Op: &raftv1.Command_RecordKeyUsed{RecordKeyUsed: &raftv1.RecordKeyUsed{AccountId: acct, KeyId: id}}})
}

func revokeKey(acct, id string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_RevokeKey{RevokeKey: &raftv1.RevokeKey{AccountId: acct, KeyId: id}}})
}

func createGroup(acct, id, name string, channels []byte) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
		AccountId: acct, GroupId: id, Name: name, ChannelsJson: channels,
	}}})
}

func revokeAgentToken(id string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_RevokeAgentToken{RevokeAgentToken: &raftv1.RevokeAgentToken{Id: id}}})
}

func createAgentToken(id, region, hash string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: &raftv1.CreateAgentToken{
		Id: id, Region: region, Name: "agent " + id, Hash: []byte(hash),
	}}})
}

// mixedCommands is a sequence touching every command type and status.
func mixedCommands() []*raftv1.Command {
	return []*raftv1.Command{
		newAccount("a1"),
		newAccount("a2"),
		createAccount(accountOp("a3", "A1@example.com")), // conflict
		setPlan("a1", plan("pro")),
		setPlan("nobody", plan("pro")), // not found
		createKey(key("a1", "k1", raftv1.KeyType_KEY_TYPE_MANAGEMENT)),
		revokeKey("a1", "ik"),
		createGroup("a1", "g1", "ops", []byte(`[{"type":"email"}]`)),
		createGroup("a1", "g2", "ops", nil), // conflict
		createAgentToken("t1", "eu", "at-hash-1"),
		withRID(newAccount("a4"), "rid-1", t0+1),
		withRID(newAccount("a5"), "rid-1", t0+2), // deduplicated
	}
}
