package state

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
)

// backupOf writes the backup file of s.
func backupOf(t *testing.T, s *Store) []byte {
	t.Helper()
	snap, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var b bytes.Buffer
	n, err := WriteBackup(&b, snap)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteBackup = %d, %v; wrote %d", n, err, b.Len())
	}
	return b.Bytes()
}

// TestBackupRoundTrip: a backup file holds the snapshot stream at the
// place CheckBackup names, and restores to the same state.
func TestBackupRoundTrip(t *testing.T) {
	src, snap := snapshotOf(t)
	file := backupOf(t, src)
	info, err := CheckBackup(bytes.NewReader(file))
	if err != nil {
		t.Fatalf("CheckBackup: %v", err)
	}
	if info.AppliedIndex != src.AppliedIndex() {
		t.Errorf("applied index %d, want %d", info.AppliedIndex, src.AppliedIndex())
	}
	stream := file[info.Offset : info.Offset+info.Size]
	if !bytes.Equal(stream, snap) {
		t.Fatalf("the file's stream (%d bytes) differs from the snapshot (%d bytes)", len(stream), len(snap))
	}
	dst := openStore(t)
	if err := dst.Restore(bytes.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dump(t, dst), snap) {
		t.Error("restored state differs")
	}
}

// TestBackupRefusesDamage: every cut of the file and every flipped byte
// is refused with ErrBadBackup.
func TestBackupRefusesDamage(t *testing.T) {
	src, _ := snapshotOf(t)
	file := backupOf(t, src)
	check := func(name string, b []byte) {
		t.Helper()
		if _, err := CheckBackup(bytes.NewReader(b)); !errors.Is(err, ErrBadBackup) {
			t.Errorf("%s: CheckBackup = %v, want ErrBadBackup", name, err)
		}
	}
	for _, n := range []int{0, 5, len(backupMagic) + 3, len(file) / 2, len(file) - 33, len(file) - 32, len(file) - 1} {
		check("cut at "+itoa(n), file[:n])
	}
	for _, i := range []int{0, len(backupMagic) + 2, len(file) / 2, len(file) - 40, len(file) - 1} {
		b := bytes.Clone(file)
		b[i] ^= 0x20
		check("byte "+itoa(i)+" flipped", b)
	}
	check("data appended", append(bytes.Clone(file), 0))
	check("a bare snapshot stream", dump(t, src))
}

func itoa(n int) string { return strconv.Itoa(n) }
