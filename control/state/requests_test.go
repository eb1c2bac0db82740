package state

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestRequestIDReturnsFirstResult(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first       *raftv1.Command
		retry       *raftv1.Command
		sameBatch   bool
		want        raftv1.Status
		notCreated  string // an account the retry must not create
		wantCreated string // an account the first command created
	}{
		{name: "OK then would conflict", first: newAccount("a"), retry: newAccount("a"),
			want: raftv1.Status_STATUS_OK, wantCreated: "a"},
		{name: "OK then a different command", first: newAccount("a"), retry: newAccount("b"),
			want: raftv1.Status_STATUS_OK, wantCreated: "a", notCreated: "b"},
		{name: "not found then would succeed", first: setPlan("a", plan("pro")), retry: newAccount("a"),
			want: raftv1.Status_STATUS_NOT_FOUND, notCreated: "a"},
		{name: "in the same batch", first: newAccount("a"), retry: newAccount("b"), sameBatch: true,
			want: raftv1.Status_STATUS_OK, wantCreated: "a", notCreated: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			first := withRID(tc.first, "rid-1", t0)
			retry := withRID(tc.retry, "rid-1", t0+1000)
			var res []*raftv1.Result
			if tc.sameBatch {
				res = apply(t, s, first, retry)
			} else {
				res = apply(t, s, first)
				before := dumpKV(t, s, false)
				res = append(res, apply(t, s, retry)...)
				requireSameKV(t, before, dumpKV(t, s, false))
			}
			if res[0].GetStatus() != tc.want || !proto.Equal(res[0], res[1]) {
				t.Fatalf("results %v and %v, want both %v", res[0], res[1], tc.want)
			}
			if s.AppliedIndex() != 2 {
				t.Errorf("applied index %d, want 2", s.AppliedIndex())
			}
			if tc.wantCreated != "" {
				if _, err := s.Account(tc.wantCreated); err != nil {
					t.Errorf("account %s: %v", tc.wantCreated, err)
				}
			}
			if tc.notCreated != "" {
				_, err := s.Account(tc.notCreated)
				requireNotFound(t, "account "+tc.notCreated, err)
			}
		})
	}
}

func TestRequestIDsExpire(t *testing.T) {
	const ttl = requestTTLMillis
	for _, tc := range []struct {
		name  string
		prune bool // a PruneEvents between the first and the retry
		retry *raftv1.Command
		want  raftv1.Status
	}{
		{name: "retry at exactly the TTL is still deduplicated",
			retry: withRID(newAccount("a"), "rid-1", t0+ttl), want: raftv1.Status_STATUS_OK},
		{name: "a prune at exactly the TTL keeps the id",
			prune: true, retry: withRID(newAccount("a"), "rid-1", t0+ttl), want: raftv1.Status_STATUS_OK},
		{name: "past the TTL the id is new, pruned or not",
			retry: withRID(newAccount("a"), "rid-1", t0+ttl+1), want: raftv1.Status_STATUS_CONFLICT},
		{name: "past the TTL after a prune",
			prune: true, retry: withRID(newAccount("a"), "rid-1", t0+ttl+1), want: raftv1.Status_STATUS_CONFLICT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, withRID(newAccount("a"), "rid-1", t0))
			if tc.prune {
				mustOK(t, s, pruneAt(tc.retry.GetTimeUnixMs(), 0, MaxPruneEvents))
				kept := len(keysWithPrefix(t, s, prefixRequest)) == 1
				if wantKept := tc.want == raftv1.Status_STATUS_OK; kept != wantKept {
					t.Fatalf("after the prune the id is kept: %v, want %v", kept, wantKept)
				}
			}
			res := apply(t, s, tc.retry)[0]
			if res.GetStatus() != tc.want {
				t.Fatalf("retry: %v %s, want %v", res.GetStatus(), res.GetMessage(), tc.want)
			}
			// One time key for the id: the first one's, or the retry's when
			// the retry applied anew.
			wantTime := t0
			if tc.want != raftv1.Status_STATUS_OK {
				wantTime = tc.retry.GetTimeUnixMs()
			}
			if times := keysWithPrefix(t, s, prefixReqTime); len(times) != 1 || times[0] != string(reqTimeKey(wantTime, "rid-1")) {
				t.Errorf("req-time keys %q, want one at %d", times, wantTime)
			}
		})
	}
}

func TestRequestPruningIsBoundedAndOldestFirst(t *testing.T) {
	s := openStore(t)
	var cmds []*raftv1.Command
	n := 100
	for i := range n {
		cmds = append(cmds, withRID(createAgentToken(fmt.Sprint("t", i), "eu", fmt.Sprint("h", i)), fmt.Sprintf("rid-%03d", i), t0+int64(i)))
	}
	mustOK(t, s, cmds...)
	count := func() (int, int) {
		return len(keysWithPrefix(t, s, prefixRequest)), len(keysWithPrefix(t, s, prefixReqTime))
	}
	if r, rt := count(); r != n || rt != n {
		t.Fatalf("remembered %d ids, %d times, want %d", r, rt, n)
	}
	// Other entries prune nothing: pruning is off the write path.
	late := t0 + requestTTLMillis + int64(n) // every id has expired
	mustOK(t, s, createAgentToken("late", "eu", "late"))
	if r, _ := count(); r != n {
		t.Fatalf("an ordinary entry pruned: %d ids left", r)
	}
	for i, want := range []int{n - 64, 0} {
		res := apply(t, s, pruneAt(late, 0, 64))[0]
		if got, wantN := res.GetDeleted(), int64(min(64, n-64*i)); got != wantN {
			t.Fatalf("prune %d deleted %d, want %d", i, got, wantN)
		}
		if r, rt := count(); r != want || rt != want {
			t.Fatalf("after prune %d: %d ids, %d times left, want %d", i, r, rt, want)
		}
		if i == 0 { // oldest first
			if left := keysWithPrefix(t, s, prefixRequest); left[0] != "req:rid-064" {
				t.Fatalf("oldest id left %q, want rid-064", left[0])
			}
		}
	}
}

// pruneAt is a PruneEvents command stamped at ms.
func pruneAt(ms, before, max int64) *raftv1.Command {
	return &raftv1.Command{Version: CommandVersion, TimeUnixMs: ms,
		Op: &raftv1.Command_PruneEvents{PruneEvents: &raftv1.PruneEvents{BeforeUnixMs: before, Max: max}}}
}

func TestRequestIDReplayAfterRestartKeepsResult(t *testing.T) {
	dir := t.TempDir()
	s := openStoreAt(t, dir)
	mustOK(t, s, withRID(newAccount("a"), "rid-1", t0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStoreAt(t, dir)
	res := apply(t, s, withRID(newAccount("a"), "rid-1", t0+5))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("retry after reopen: %v %s", res.GetStatus(), res.GetMessage())
	}
}
