package state

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// requireCacheCoherent checks every committed value the store's valueCache
// holds against the database, and that no transaction's writes are pending.
func requireCacheCoherent(t *testing.T, s *Store) {
	t.Helper()
	c := s.values
	if len(c.pending) != 0 || len(c.pendingEvents) != 0 {
		t.Errorf("%d pending values and %d events outside an apply", len(c.pending), len(c.pendingEvents))
	}
	if len(c.committed) == 0 || len(c.events) == 0 {
		t.Error("the cache holds nothing: the test checks nothing")
	}
	err := s.view(func(txn *badger.Txn) error {
		for key, cv := range c.committed {
			v, err := getRaw(txn, []byte(key))
			switch {
			case errors.Is(err, ErrNotFound):
				if cv.ok {
					t.Errorf("cached %q = %q, absent in the database", key, cv.v)
				}
			case err != nil:
				return err
			case !cv.ok:
				t.Errorf("cached %q as absent, the database has %q", key, v)
			case !bytes.Equal(v, cv.v):
				t.Errorf("cached %q = %q, the database has %q", key, cv.v, v)
			}
		}
		for key := range c.events {
			_, err := getRaw(txn, []byte(key))
			if errors.Is(err, ErrNotFound) {
				t.Errorf("cached event %q, absent in the database", key)
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	requireAccountsCoherent(t, s)
}

// cacheWorkload is every command that writes cached keys: ingest (new and
// known monitors, runs opened and closed, trimming), age pruning, monitor
// deletion, a name used again after its monitor was deleted, and a check's
// executions, pause, resume and deletion.
func cacheWorkload(t *testing.T, s *Store) []*raftv1.Result {
	t.Helper()
	var res []*raftv1.Result
	res = append(res, apply(t, s, append(mixedCommands(), ingestCommands()...)...)...)
	res = append(res, apply(t, s,
		ingestAt(t0+2000, 2, ping("a1", "backup", "run", t0+20_000, series("s2")), ping("a1", "fresh", "run", t0)),
		pruneEvents(t0+5000, 10),
	)...)
	id := mustMonitor(t, s, "a1", "backup").GetUuid()
	res = append(res, apply(t, s,
		deleteMonitor("a1", id),
		ingestAt(t0+3000, 2, ping("a1", "backup", "complete", t0+21_000), ping("a1", "fresh", "complete", t0+1)),
	)...)
	id = mustMonitor(t, s, "a1", "fresh").GetUuid()
	// Deleted and used again within one entry run (one transaction).
	res = append(res, apply(t, s,
		ingestAt(t0+4000, 2, ping("a1", "fresh", "run", t0+2)),
		deleteMonitor("a1", id),
		ingestAt(t0+4000, 2, ping("a1", "fresh", "run", t0+3)),
	)...)
	// A check's status: written by executions, read by a pause and a
	// resume, deleted with the check.
	check := checkSpec(0)
	exec := func(slot int64, status string) *raftv1.Execution {
		e := execution(slot, status)
		e.AccountId, e.CheckUuid = "a1", check.GetUuid()
		return e
	}
	res = append(res, apply(t, s,
		putMonitorsCmd("a1", []*raftv1.MonitorSpec{check}, nil),
		recordCmd(100, exec(t0, ExecFailed)),
		recordCmd(100, exec(t0+60_000, ExecSuccess)),
		pauseCmd("a1", check.GetUuid(), t0+70_000, 0, "maintenance"),
		resumeCmd("a1", check.GetUuid(), t0+80_000),
		recordCmd(100, exec(t0+120_000, ExecFailed)),
	)...)
	res = append(res, apply(t, s, deleteMonitor("a1", check.GetUuid()))...)
	return res
}

// TestValueCacheCoherent runs the workload on a store with the cache and on
// one without: same results, same state, and the cache matches the
// database.
func TestValueCacheCoherent(t *testing.T) {
	with, _ := withAndWithoutCache(t, cacheWorkload)
	requireCacheCoherent(t, with)
	// The cache served the second half: it also saw the monitors of the
	// first entries.
	if mon := mustMonitor(t, with, "a1", "fresh"); mon.GetPing().GetEvents() != 1 {
		t.Fatalf("re-created monitor: %d events", mon.GetPing().GetEvents())
	}
}

func TestValueCacheAfterDeleteMonitor(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	first := ingestOK(t, s, ingestNow(ping("a", "job", "run", t0)))[0].GetMonitorUuid()
	ingestOK(t, s, ingestNow(ping("a", "job", "run", t0+1))) // cached now
	mustOK(t, s, deleteMonitor("a", first))
	second := ingestOK(t, s, ingestNow(ping("a", "job", "complete", t0+2)))[0].GetMonitorUuid()
	if second == first || second == "" {
		t.Fatalf("after deletion the name still maps to %s (was %s)", second, first)
	}
	mon := mustMonitor(t, s, "a", "job")
	if mon.GetUuid() != second || mon.GetPing().GetEvents() != 1 || mon.GetPing().GetNextSeq() != 1 {
		t.Fatalf("new monitor %v", mon)
	}
	if runs := openRunsOf(t, s, second); len(runs) != 0 {
		t.Fatalf("the new monitor inherited runs %v", runs)
	}
	requireCacheCoherent(t, s)
}

// TestValueCacheDropsDiscardedTransaction applies entries in a transaction
// that is then discarded (as ApplyBatch does when a run does not fit one
// transaction): their writes must not be seen later.
func TestValueCacheDropsDiscardedTransaction(t *testing.T) {
	s, ref := openStore(t), openStore(t)
	setup := []*raftv1.Command{newAccount("a"), ingestNow(ping("a", "job", "run", t0, series("x")))}
	mustOK(t, s, setup...)
	mustOK(t, ref, setup...)
	id := mustMonitor(t, s, "a", "job").GetUuid()
	discarded := entries(s.AppliedIndex()+1,
		ingestAt(t0, 1, ping("a", "job", "complete", t0+1, series("x")), ping("a", "job", "run", t0+2), ping("a", "other", "run", t0)),
		deleteMonitor("a", id),
		ingestNow(ping("a", "job", "run", t0+3)),
	)
	if n := fitsOneTxn(t, s, discarded); n != len(discarded) {
		t.Fatalf("%d of %d entries fitted", n, len(discarded))
	}
	if s.AppliedIndex() != ref.AppliedIndex() {
		t.Fatal("the discarded transaction moved the applied index")
	}
	next := entries(s.AppliedIndex()+1, ingestAt(t0+10, 1, ping("a", "job", "complete", t0+4, series("x")), ping("a", "other", "run", t0+5)))
	r1, r2 := s.ApplyBatch(next), ref.ApplyBatch(next)
	if !proto.Equal(r1[0], r2[0]) {
		t.Fatalf("results %v, want %v", r1[0], r2[0])
	}
	if r1[0].GetEvents()[0].GetMonitorUuid() != id {
		t.Fatal("the monitor deleted by the discarded transaction is gone")
	}
	if !bytes.Equal(dump(t, s), dump(t, ref)) {
		t.Fatal("the discarded transaction left a trace")
	}
	requireCacheCoherent(t, s)
}

func TestValueCacheAfterRestore(t *testing.T) {
	src, dst := openStore(t), openStore(t)
	mustOK(t, src, newAccount("a"), ingestNow(ping("a", "job", "run", t0, series("x"))))
	snap := dump(t, src)
	// dst has its own monitor of that name (another uuid), cached.
	mustOK(t, dst, newAccount("a"), newAccount("b"), ingestNow(ping("a", "job", "run", t0+1)), ingestNow(ping("a", "job", "run", t0+2)))
	if mustMonitor(t, dst, "a", "job").GetUuid() == mustMonitor(t, src, "a", "job").GetUuid() {
		t.Fatal("the test needs different uuids")
	}
	if err := dst.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	next := entries(src.AppliedIndex()+1, ingestNow(ping("a", "job", "complete", t0+3, series("x"))))
	r1, r2 := src.ApplyBatch(next), dst.ApplyBatch(next)
	if !proto.Equal(r1[0], r2[0]) {
		t.Fatalf("after restore: results %v, want %v", r2[0], r1[0])
	}
	if !bytes.Equal(dump(t, dst), dump(t, src)) {
		t.Fatal("restored store diverged from the source")
	}
	requireCacheCoherent(t, dst)
}

func TestValueCacheBounded(t *testing.T) {
	c := newValueCache()
	v := make([]byte, 1<<20)
	for i := range 100 {
		c.remember(string(monitorKey(string(rune('a'+i%26))+string(rune('a'+i/26)))), cachedValue{v: v, ok: true})
		if c.bytes > maxValueCacheBytes {
			t.Fatalf("%d bytes cached", c.bytes)
		}
	}
}

// withAndWithoutCache runs workload on a store with the valueCache and on
// one without, and requires the same results and the same state. It
// returns the stores and the results (the cached store's).
func withAndWithoutCache(t *testing.T, workload func(*testing.T, *Store) []*raftv1.Result) (*Store, []*raftv1.Result) {
	t.Helper()
	with, without := openStore(t), openStore(t)
	without.values = nil
	r1, r2 := workload(t, with), workload(t, without)
	for i := range r1 {
		if !proto.Equal(r1[i], r2[i]) {
			t.Errorf("entry %d: results %v (cache) and %v (none)", i, r1[i], r2[i])
		}
	}
	if !bytes.Equal(dump(t, with), dump(t, without)) {
		t.Fatal("the cache changed the state")
	}
	return with, r1
}
