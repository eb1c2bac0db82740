package state

import (
	"bytes"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestRetentionStartMovesIntoTheRecord: a monitor whose retention start is
// an ev-lo: key (the layout before PingState.events_low) trims from that
// start, and its next trim moves the start into the record and deletes the
// key, so that the state is then the one of a store that kept the start in
// the record all along. The start is above an event still kept (a
// straggler), so trimming from anywhere else would delete another event.
func TestRetentionStartMovesIntoTheRecord(t *testing.T) {
	old, ref := openStore(t), openStore(t)
	setup := []*raftv1.Command{newAccount("a"), ingestAt(t0, 3,
		ping("a", "job", "run", t0), ping("a", "job", "complete", t0+1), ping("a", "job", "run", t0+2),
		ping("a", "job", "complete", t0+3), ping("a", "job", "run", t0+4))}
	mustOK(t, old, setup...)
	mustOK(t, ref, setup...)
	m := mustMonitor(t, old, "a", "job")
	if got := m.GetPing().GetEventsLow(); got != 2 {
		t.Fatalf("retention start %d after keeping 3 of 5 events, want 2", got)
	}
	// Both stores: the start at 3, with event 2 kept below it. ref keeps
	// it in the record, old in an ev-lo: key.
	rewrite := func(s *Store, recordLow uint64, key bool) {
		t.Helper()
		m := proto.CloneOf(m)
		m.Ping.EventsLow = recordLow
		rec, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		err = s.db().Update(func(txn *badger.Txn) error {
			if key {
				if err := txn.Set(eventLowKey(m.GetUuid()), u64(3)); err != nil {
					return err
				}
			}
			return txn.Set(monitorKey(m.GetUuid()), rec)
		})
		if err != nil {
			t.Fatal(err)
		}
		s.values.reset()
	}
	rewrite(ref, 3, false)
	rewrite(old, 0, true)

	next := ingestAt(t0+10, 3, ping("a", "job", "complete", t0+5))
	r1, r2 := apply(t, old, next), apply(t, ref, next)
	if !proto.Equal(r1[0], r2[0]) {
		t.Fatalf("results %v (ev-lo: key) and %v (record)", r1[0], r2[0])
	}
	if !bytes.Equal(dump(t, old), dump(t, ref)) {
		t.Fatal("the store with the ev-lo: key differs from the one without")
	}
	if keys := keysWithPrefix(t, old, prefixEventLow); len(keys) != 0 {
		t.Fatalf("ev-lo: keys left: %v", keys)
	}
	if got := mustMonitor(t, old, "a", "job").GetPing().GetEventsLow(); got != 4 {
		t.Fatalf("retention start %d, want 4", got)
	}
	// Event 2, below the start, is kept; event 3 went.
	if got := seqs(mustEvents(t, old, "a", m.GetUuid(), 0)); !equalU64(got, []uint64{5, 4, 2}) {
		t.Fatalf("events %v, want [5 4 2]", got)
	}
}
