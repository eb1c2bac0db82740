package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func endSession(id, acct string, expires int64) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_EndSession{EndSession: &raftv1.EndSession{SessionId: id, AccountId: acct, ExpiresUnixMs: expires}}})
}

func sessionEnded(t *testing.T, s *Store, id string) bool {
	t.Helper()
	ended, err := s.SessionEnded(id)
	if err != nil {
		t.Fatal(err)
	}
	return ended
}

// An ended session is refused as soon as the entry is applied (also when
// the answer "not ended" was cached before), kept while it could still be
// presented, and pruned an hour after it expired.
func TestEndSession(t *testing.T) {
	s := openStore(t)
	const day = 24 * 60 * 60 * 1000
	if sessionEnded(t, s, "nonce-1") { // cached: not ended
		t.Fatal("a session nobody ended is ended")
	}
	mustOK(t, s, endSession("nonce-1", "a", t0+7*day))
	if !sessionEnded(t, s, "nonce-1") {
		t.Fatal("ended session not ended (a stale cached answer?)")
	}
	if sessionEnded(t, s, "nonce-2") {
		t.Fatal("another session ended too")
	}
	mustOK(t, s, endSession("nonce-1", "a", t0+7*day)) // again: nothing changes
	mustOK(t, s, endSession("nonce-2", "a", t0+day))

	for _, bad := range []*raftv1.Command{
		endSession("", "a", t0+day),
		endSession("n", "", t0+day),
		endSession("n", "a", 0),
		endSession("n", "a", t0+MaxSessionMillis+1),
	} {
		if res := apply(t, s, bad)[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
			t.Errorf("%v: %v", bad.GetEndSession(), res.GetStatus())
		}
	}
	if res := apply(t, s, endSession(long(MaxKeyPartBytes+1), "a", t0+day))[0]; res.GetCode() != CodeCommandTooLarge {
		t.Errorf("a session id over the key bound: %v %s", res.GetStatus(), res.GetCode())
	}

	// Pruning: nothing before expiry plus the grace. (SessionEnded may
	// still answer a pruned session from its cache: it has expired.)
	prune := func(at int64) {
		c := pruneEvents(at, 100)
		c.TimeUnixMs = at
		mustOK(t, s, c)
	}
	stored := func() int { return len(keysWithPrefix(t, s, prefixSessionEnd)) }
	prune(t0 + day + sessionEndGraceMillis - 1)
	if stored() != 2 {
		t.Fatalf("%d ended sessions stored, want 2: pruned before the grace ran out", stored())
	}
	prune(t0 + day + sessionEndGraceMillis + 1)
	if stored() != 1 {
		t.Fatalf("%d ended sessions stored, want 1", stored())
	}
	s.auth.invalidate() // read from the database
	if sessionEnded(t, s, "nonce-2") || !sessionEnded(t, s, "nonce-1") {
		t.Fatal("pruning took the wrong session")
	}
	prune(t0 + 7*day + sessionEndGraceMillis + 1)
	if keys := keysWithPrefix(t, s, []byte("session-end")); len(keys) != 0 {
		t.Fatalf("keys left: %q", keys)
	}
}
