package state

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// restoreSource is the snapshot of a state that holds account "keep", its
// management key and 300 monitors, and account extra.
func restoreSource(t *testing.T, extra string) []byte {
	t.Helper()
	s := openStore(t)
	mustOK(t, s, newAccount("keep"), putMonitorsCmd("keep", minimalPings(300), nil), newAccount(extra))
	return dump(t, s)
}

// readKept reads what both restoreSource states hold, as a request would:
// the account, its key, a monitor by name, the list of monitors.
func readKept(s *Store) error {
	if _, err := s.Account("keep"); err != nil {
		return fmt.Errorf("account: %w", err)
	}
	if _, err := s.KeyByHash([]byte("hash-keep-mk")); err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if _, err := s.MonitorByName("keep", KindPing, "m7"); err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	ms, err := s.Monitors("keep")
	if err != nil {
		return fmt.Errorf("monitors: %w", err)
	}
	if len(ms) != 300 {
		return fmt.Errorf("%d monitors, want 300", len(ms))
	}
	return nil
}

// TestRestoreUnderReadsSeesOldOrNewState: while the state is restored
// again and again (and written between restores), readers never fail,
// never panic and always find what both the old and the new state hold;
// snapshots taken meanwhile stream whole, and one held across the
// restores still streams the state it was taken of.
func TestRestoreUnderReadsSeesOldOrNewState(t *testing.T) {
	t.Parallel() // heavy: overlaps the package's other heavy tests
	snapA, snapB := restoreSource(t, "only-a"), restoreSource(t, "only-b")
	dir := t.TempDir()
	s := openStoreAt(t, dir)
	if err := s.Restore(bytes.NewReader(snapA)); err != nil {
		t.Fatal(err)
	}
	held, err := s.Snapshot() // as raft persisting a snapshot for a long time
	if err != nil {
		t.Fatal(err)
	}

	var (
		stop  atomic.Bool
		wg    sync.WaitGroup
		reads atomic.Int64
		errMu sync.Mutex
		errs  []error
	)
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(errs) < 5 {
			errs = append(errs, err)
		}
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := readKept(s); err != nil {
					fail(err)
				}
				reads.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() { // snapshots taken while restores run (admin snapshot save)
		defer wg.Done()
		for !stop.Load() {
			snap, err := s.Snapshot()
			if err != nil {
				fail(fmt.Errorf("snapshot: %w", err))
				continue
			}
			var buf bytes.Buffer
			_, err = snap.WriteTo(&buf)
			snap.Release()
			if err == nil {
				err = checkStream(buf.Bytes())
			}
			if err != nil {
				fail(fmt.Errorf("stream a snapshot: %w", err))
			}
		}
	}()

	for i := range 20 {
		snap := snapA
		if i%2 == 0 {
			snap = snapB
		}
		if err := s.Restore(bytes.NewReader(snap)); err != nil {
			t.Fatalf("restore %d: %v", i, err)
		}
		mustOK(t, s, newAccount(fmt.Sprint("written-", i)))
	}
	stop.Store(true)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	t.Logf("%d reads during 20 restores", reads.Load())

	var buf bytes.Buffer
	if _, err := held.WriteTo(&buf); err != nil {
		t.Fatalf("a snapshot held across restores: %v", err)
	}
	held.Release()
	if !bytes.Equal(buf.Bytes(), snapA) {
		t.Fatal("a snapshot held across restores streams another state")
	}
	if _, err := s.Account("written-19"); err != nil {
		t.Fatalf("a write after the last restore: %v", err)
	}
	if _, err := s.Account("only-a"); err != nil { // the last restore's
		t.Fatalf("account of the restored state: %v", err)
	}
	if _, err := s.Account("only-b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("account of the replaced state: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	requireGenerations(t, dir, 1)
	if _, err := s.Account("keep"); !errors.Is(err, ErrClosed) {
		t.Fatalf("a read of a closed store: %v", err)
	}
}

// checkStream reads a snapshot stream through: its header, every record,
// the end mark, and nothing after it.
func checkStream(b []byte) error {
	r := bytes.NewReader(b)
	if _, err := SnapshotAppliedIndex(r); err != nil {
		return err
	}
	for {
		key, err := readChunk(r)
		if err != nil {
			return err
		}
		if len(key) == 0 {
			break
		}
		if _, err := readChunk(r); err != nil {
			return err
		}
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d bytes after the end mark", r.Len())
	}
	return nil
}
