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
		name   string
		later  []*raftv1.Command // applied between the first and the retry
		retry  *raftv1.Command
		want   raftv1.Status
		pruned bool
	}{
		{name: "retry at exactly 24h is still deduplicated",
			retry: withRID(newAccount("a"), "rid-1", t0+ttl), want: raftv1.Status_STATUS_OK},
		{name: "unrelated entry at exactly 24h prunes nothing",
			later: []*raftv1.Command{withRID(newAccount("x"), "", t0+ttl)},
			retry: withRID(newAccount("a"), "rid-1", t0+ttl), want: raftv1.Status_STATUS_OK},
		{name: "unrelated entry after 24h prunes, retry applies again",
			later: []*raftv1.Command{withRID(newAccount("x"), "", t0+ttl+1)},
			retry: withRID(newAccount("a"), "rid-1", t0+ttl+1), want: raftv1.Status_STATUS_CONFLICT, pruned: true},
		{name: "the retry itself after 24h prunes and applies again",
			retry: withRID(newAccount("a"), "rid-1", t0+ttl+1), want: raftv1.Status_STATUS_CONFLICT, pruned: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, withRID(newAccount("a"), "rid-1", t0))
			mustOK(t, s, tc.later...)
			if tc.pruned && len(tc.later) > 0 {
				if left := keysWithPrefix(t, s, []byte("req")); len(left) != 0 {
					t.Fatalf("after 24h: request keys left: %q", left)
				}
			}
			res := apply(t, s, tc.retry)[0]
			if res.GetStatus() != tc.want {
				t.Fatalf("retry: %v %s, want %v", res.GetStatus(), res.GetMessage(), tc.want)
			}
			// The id is remembered (again), with the retry's time if it was pruned.
			reqTimes := keysWithPrefix(t, s, prefixReqTime)
			wantTime := t0
			if tc.pruned {
				wantTime = tc.retry.GetTimeUnixMs()
			}
			if want := string(reqTimeKey(wantTime, "rid-1")); len(reqTimes) != 1 || reqTimes[0] != want {
				t.Errorf("req-time keys %q, want [%q]", reqTimes, want)
			}
		})
	}
}

func TestRequestPruningIsBounded(t *testing.T) {
	s := openStore(t)
	var cmds []*raftv1.Command
	n := pruneBatch + pruneBatch/2
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
	late := t0 + requestTTLMillis + int64(n) // every id has expired
	for i, want := range []int{n - pruneBatch, 0, 0} {
		mustOK(t, s, withRID(createAgentToken(fmt.Sprint("late", i), "eu", fmt.Sprint("late", i)), "", late))
		if r, rt := count(); r != want || rt != want {
			t.Fatalf("after late entry %d: %d ids, %d times left, want %d", i, r, rt, want)
		}
		if i == 0 { // oldest first
			if left := keysWithPrefix(t, s, prefixRequest); left[0] != fmt.Sprintf("req:rid-%03d", pruneBatch) {
				t.Fatalf("oldest id left %q, want rid-%03d", left[0], pruneBatch)
			}
		}
	}
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
