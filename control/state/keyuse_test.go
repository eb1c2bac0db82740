package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// A key's last use is recorded coarsely: the first use, then a use at
// least KeyUseResolution after the one recorded; pings record their key in
// the batch's own transaction, management keys through RecordKeyUsed; a
// revoked key's record goes with it.
func TestKeyLastUsed(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	used := func() map[string]int64 {
		t.Helper()
		got, err := s.KeysLastUsed("a")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := used(); len(got) != 0 {
		t.Fatalf("before any use: %v", got)
	}
	batch := func(ms int64, keyID string) *raftv1.Command {
		return cmd(&raftv1.Command{TimeUnixMs: ms, Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{
			{AccountId: "a", Monitor: "backup", EventType: "ping", Status: "run", ReceivedUnixMs: ms, KeyId: keyID},
			{AccountId: "a", Monitor: "backup", EventType: "ping", Status: "complete", ReceivedUnixMs: ms, KeyId: keyID},
		}}}})
	}
	mustOK(t, s, batch(t0, "ik"))
	if got := used(); len(got) != 1 || got["ik"] != t0 {
		t.Fatalf("after a batch: %v", got)
	}
	// Within the hour: not written again (the applied entry writes no
	// key-used: record).
	before := dumpKV(t, s, false)
	mustOK(t, s, batch(t0+KeyUseResolution-1, "ik"))
	after := dumpKV(t, s, false)
	if string(after[string(keyUsedKey("a", "ik"))]) != string(before[string(keyUsedKey("a", "ik"))]) || used()["ik"] != t0 {
		t.Fatalf("a use within the hour was recorded: %v", used())
	}
	mustOK(t, s, batch(t0+KeyUseResolution, "ik"))
	if got := used()["ik"]; got != t0+KeyUseResolution {
		t.Fatalf("an hour later: %d", got)
	}

	// A management key, by RecordKeyUsed; a revoked or unknown key is
	// NOT_FOUND.
	mustOK(t, s, recordKeyUsed("a", "mk", t0+5))
	mustOK(t, s, recordKeyUsed("a", "mk", t0+10)) // within the hour: kept as it was
	if got := used()["mk"]; got != t0+5 {
		t.Fatalf("management key: %d", got)
	}
	if res := apply(t, s, recordKeyUsed("a", "nope", t0))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("unknown key: %v", res)
	}
	mustOK(t, s, revokeKey("a", "mk"))
	if _, has := used()["mk"]; has {
		t.Fatalf("a revoked key's use stays: %v", used())
	}
}
