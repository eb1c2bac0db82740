package state

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// streamOf is a snapshot stream at applied index applied holding the
// records kv (key, value, key, value...) in the order given.
func streamOf(applied uint64, kv ...string) []byte {
	var b bytes.Buffer
	b.Write(snapshotMagic)
	b.Write(u64(applied))
	for _, s := range kv {
		b.Write(binary.AppendUvarint(nil, uint64(len(s))))
		b.WriteString(s)
	}
	b.WriteByte(0)
	return b.Bytes()
}

// TestRestorePutsTheAppliedIndexInOrder: the header's applied index is
// loaded under meta:applied, in key order among the stream's keys, whether
// the stream holds that key (with another value) or not, and whether its
// keys sort before it, after it, or both.
func TestRestorePutsTheAppliedIndexInOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
	}{
		{"no keys", nil},
		{"keys before it", []string{"acct:a", "1"}},
		{"keys after it", []string{"mon:a", "1", "zz", "2"}},
		{"keys both sides", []string{"acct:a", "1", "mon:a", "2"}},
		{"its own record", []string{"acct:a", "1", string(keyApplied), string(u64(7)), "mon:a", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, newAccount("gone"))
			if err := s.Restore(bytes.NewReader(streamOf(42, tc.kv...))); err != nil {
				t.Fatalf("restore: %v", err)
			}
			if s.AppliedIndex() != 42 {
				t.Errorf("applied index %d, want 42", s.AppliedIndex())
			}
			got := dumpKV(t, s, true)
			want := map[string]string{string(keyApplied): string(u64(42))}
			for i := 0; i < len(tc.kv); i += 2 {
				if tc.kv[i] != string(keyApplied) {
					want[tc.kv[i]] = tc.kv[i+1]
				}
			}
			if len(got) != len(want) {
				t.Errorf("restored %d keys, want %d: %q", len(got), len(want), got)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%q = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestRestoreRefusesKeysOutOfOrder: the load builds tables from keys in
// order; a stream with a key out of order, or twice, is refused (not a
// panic of the table builder) and leaves the state in use as it was.
func TestRestoreRefusesKeysOutOfOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
	}{
		{"out of order", []string{"mon:b", "1", "mon:a", "2"}},
		{"twice", []string{"mon:a", "1", "mon:a", "2"}},
		{"out of order around meta:applied", []string{"mon:a", "1", "acct:a", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStoreAt(t, dir)
			mustOK(t, s, newAccount("keep"))
			want := dump(t, s)
			if err := s.Restore(bytes.NewReader(streamOf(42, tc.kv...))); err == nil {
				t.Fatal("restore accepted keys out of order")
			}
			if !bytes.Equal(dump(t, s), want) || s.AppliedIndex() != 1 {
				t.Errorf("a refused stream changed the state (applied index %d)", s.AppliedIndex())
			}
			requireGenerations(t, dir, 1)
		})
	}
}

// TestRestoreKeepsLargeValues: values too large to stay in Badger's tables
// (over the value threshold: 1 KiB for the small test options, 1 MiB in
// production) go to the value log while a snapshot loads, and read back
// whole, before and after the store is opened again.
func TestRestoreKeepsLargeValues(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Small: true})
	if err != nil {
		t.Fatal(err)
	}
	small, kib, mib := "v", strings.Repeat("k", 4<<10), strings.Repeat("m", 2<<20)
	want := map[string]string{"acct:a": small, "acct:b": kib, "mon:a": mib, "mon:b": small}
	if err := s.Restore(bytes.NewReader(streamOf(9, "acct:a", small, "acct:b", kib, "mon:a", mib, "mon:b", small))); err != nil {
		t.Fatalf("restore: %v", err)
	}
	check := func(s *Store, when string) {
		t.Helper()
		got := dumpKV(t, s, false)
		if len(got) != len(want) {
			t.Errorf("%s: %d keys, want %d", when, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %q holds %d bytes, want %d", when, k, len(got[k]), len(v))
			}
		}
	}
	check(s, "after the restore")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStoreAt(t, dir)
	check(s, "opened again")
	if s.AppliedIndex() != 9 {
		t.Errorf("applied index %d after opening again, want 9", s.AppliedIndex())
	}
}
