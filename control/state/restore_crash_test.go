package state

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// bigState is a store with most of its keys after meta:applied in key
// order (mon:, mon-name:), so that a restore commits several
// transactions after the one holding meta:applied.
func bigState(t *testing.T) *Store {
	t.Helper()
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	pad := strings.Repeat("é", 200) // a record of about 500 bytes, kept inline
	for b := range 15 {
		ms := minimalPings(MaxPutMonitors)
		for i, m := range ms {
			m.Uuid = fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", b, i)
			m.Name = fmt.Sprintf("job-%d-%d", b, i)
			m.DisplayName = pad
		}
		mustOK(t, s, putMonitorsCmd("a", ms, nil))
	}
	return s
}

// TestRestoreCrashMidwayDoesNotClaimTheSnapshot: a restore that stops half
// way (the stream breaks; the node dies) leaves a store whose applied
// index does not claim the snapshot's, so that the node restores it again
// at start (cluster's catchUpFromSnapshot) instead of running on a half
// state; the next restore brings it to the snapshot's state.
func TestRestoreCrashMidwayDoesNotClaimTheSnapshot(t *testing.T) {
	src := bigState(t)
	snap := dump(t, src)
	index := src.AppliedIndex()
	if bytes.Index(snap, keyApplied) > len(snap)/2 {
		t.Fatal("meta:applied is not in the first half of the stream: the test does not exercise a late failure")
	}
	for _, cut := range []int{len(snap) * 3 / 4, len(snap) - 10} {
		t.Run(fmt.Sprint("cut at ", cut), func(t *testing.T) {
			dir := t.TempDir()
			dst := openStoreAt(t, dir)
			mustOK(t, dst, newAccount("other"))
			if err := dst.Restore(io.LimitReader(bytes.NewReader(snap), int64(cut))); err == nil {
				t.Fatal("a broken stream restored")
			}
			if dst.AppliedIndex() >= index {
				t.Fatalf("applied index %d after a failed restore of %d", dst.AppliedIndex(), index)
			}
			// The node dies; it starts again from disk.
			if err := dst.Close(); err != nil {
				t.Fatal(err)
			}
			dst = openStoreAt(t, dir)
			if dst.AppliedIndex() >= index {
				t.Fatalf("applied index %d on disk after a failed restore of %d", dst.AppliedIndex(), index)
			}
			// Behind the snapshot, so it is restored again, fully.
			if err := dst.Restore(bytes.NewReader(snap)); err != nil {
				t.Fatal(err)
			}
			if dst.AppliedIndex() != index || !bytes.Equal(dump(t, dst), snap) {
				t.Fatalf("after a second restore: applied %d, same state %v", dst.AppliedIndex(), bytes.Equal(dump(t, dst), snap))
			}
			dst.Close()
			dst = openStoreAt(t, dir)
			if dst.AppliedIndex() != index {
				t.Fatalf("applied index %d after reopening", dst.AppliedIndex())
			}
			mustOK(t, dst, newAccount("next"))
		})
	}
}
