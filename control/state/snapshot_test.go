package state

import (
	"bytes"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// snapshotOf applies the mixed commands at indexes from 5 on to a fresh
// store and returns it with its snapshot stream.
func snapshotOf(t *testing.T) (*Store, []byte) {
	t.Helper()
	s := openStore(t)
	s.ApplyBatch(entries(5, mixedCommands()...))
	return s, dump(t, s)
}

func TestSnapshotRestore(t *testing.T) {
	src, snap := snapshotOf(t)
	wantIndex := uint64(5 + len(mixedCommands()) - 1)

	got, err := SnapshotAppliedIndex(bytes.NewReader(snap))
	if err != nil || got != wantIndex {
		t.Fatalf("SnapshotAppliedIndex = %d, %v; want %d", got, err, wantIndex)
	}

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, s *Store)
	}{
		{"fresh store", func(*testing.T, *Store) {}},
		{"store with other data and a higher index", func(t *testing.T, s *Store) {
			s.ApplyBatch(entries(100, newAccount("zzz"), createAgentToken("tz", "us", "at-z"), withRID(newAccount("a1"), "rid-z", t0)))
		}},
		{"store with a lower index", func(t *testing.T, s *Store) { mustOK(t, s, newAccount("zzz")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := openStore(t)
			tc.setup(t, dst)
			if err := dst.Restore(bytes.NewReader(snap)); err != nil {
				t.Fatalf("restore: %v", err)
			}
			if !bytes.Equal(dump(t, dst), snap) {
				t.Error("restored state differs from the snapshot")
			}
			if dst.AppliedIndex() != wantIndex {
				t.Errorf("applied index %d, want %d", dst.AppliedIndex(), wantIndex)
			}
			_, err := dst.Account("zzz")
			requireNotFound(t, "account of the wiped state", err)
			_, err = dst.AgentTokenByHash([]byte("at-z"))
			requireNotFound(t, "agent token of the wiped state", err)
			// The restored store goes on like the source.
			next := entries(wantIndex+1, newAccount("next"), withRID(newAccount("a5"), "rid-1", t0+3))
			r1, r2 := src.ApplyBatch(next), dst.ApplyBatch(next)
			if r2[0].GetStatus() != raftv1.Status_STATUS_OK || r2[1].GetStatus() != r1[1].GetStatus() {
				t.Errorf("after restore: results %v, source %v", r2, r1)
			}
			if !bytes.Equal(dump(t, dst), dump(t, src)) {
				t.Error("restored store diverged from the source")
			}
			// Undo the source's extra entries for the next case.
			if err := src.Restore(bytes.NewReader(snap)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSnapshotIsPointInTime(t *testing.T) {
	s, before := snapshotOf(t)
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	at := snap.(*Snapshot).AppliedIndex()
	mustOK(t, s, newAccount("after"), revokeKey("a1", "mk"))
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if at != s.AppliedIndex()-2 || !bytes.Equal(buf.Bytes(), before) {
		t.Fatalf("snapshot taken at %d sees later writes (applied now %d)", at, s.AppliedIndex())
	}
}

// TestRestoreRejectsBadStreams: a stream refused at its header, or one
// that breaks while it loads, leaves the state as it was, and no
// half-loaded database behind.
func TestRestoreRejectsBadStreams(t *testing.T) {
	_, snap := snapshotOf(t)
	hdr := len(snapshotMagic) + 8
	otherVersion := bytes.Clone(snap)
	otherVersion[len(snapshotMagic)-1] = 2
	otherMagic := bytes.Clone(snap)
	otherMagic[0] = 'X'
	for _, tc := range []struct {
		name      string
		stream    []byte
		badHeader bool
	}{
		{"empty", nil, true},
		{"short header", snap[:hdr-1], true},
		{"other magic", otherMagic, true},
		{"other format version", otherVersion, true},
		{"header only", snap[:hdr], false},
		{"truncated body", snap[:len(snap)-3], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := SnapshotAppliedIndex(bytes.NewReader(tc.stream)); (err != nil) != tc.badHeader {
				t.Errorf("SnapshotAppliedIndex: err %v, want error %v", err, tc.badHeader)
			}
			dir := t.TempDir()
			s := openStoreAt(t, dir)
			mustOK(t, s, newAccount("keep"))
			want := dump(t, s)
			err := s.Restore(bytes.NewReader(tc.stream))
			if err == nil {
				t.Fatal("restore accepted a bad stream")
			}
			if !bytes.Equal(dump(t, s), want) || s.AppliedIndex() != 1 {
				t.Errorf("a refused stream changed the state (applied index %d)", s.AppliedIndex())
			}
			if _, err := s.Account("keep"); err != nil {
				t.Errorf("account of the state in use after a refused stream: %v", err)
			}
			requireGenerations(t, dir, 1)
		})
	}
}
