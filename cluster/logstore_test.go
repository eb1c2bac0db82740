package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"lookout/cluster/raftbadger"
)

// badgerLog writes a Badger raft store as an earlier release left it:
// entries first..last (those before first deleted, as after a snapshot) and
// raft's stable keys.
func badgerLog(t *testing.T, dataDir string, first, last uint64) {
	t.Helper()
	s, err := raftbadger.Open(raftbadger.Options{Dir: filepath.Join(dataDir, logDirBadger), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs []*raft.Log
	for i := uint64(1); i <= last; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1 + i/50, Type: raft.LogCommand, Data: []byte{byte(i), byte(i >> 8), 'x'}})
	}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if first > 1 {
		if err := s.DeleteRange(1, first-1); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]uint64{"CurrentTerm": 7, "LastVoteTerm": 6} {
		if err := s.SetUint64([]byte(k), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Set([]byte("LastVoteCand"), []byte("n2")); err != nil {
		t.Fatal(err)
	}
}

// requireCopied checks that store holds what badgerLog wrote.
func requireCopied(t *testing.T, store interface {
	raft.LogStore
	raft.StableStore
}, first, last uint64) {
	t.Helper()
	if got, err := store.FirstIndex(); err != nil || got != first {
		t.Fatalf("first index %d, %v; want %d", got, err, first)
	}
	if got, err := store.LastIndex(); err != nil || got != last {
		t.Fatalf("last index %d, %v; want %d", got, err, last)
	}
	for i := first; i <= last; i++ {
		var l raft.Log
		if err := store.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if l.Index != i || l.Term != 1+i/50 || l.Type != raft.LogCommand || string(l.Data) != string([]byte{byte(i), byte(i >> 8), 'x'}) {
			t.Fatalf("entry %d copied as %+v", i, l)
		}
	}
	for k, want := range map[string]uint64{"CurrentTerm": 7, "LastVoteTerm": 6} {
		if got, err := store.GetUint64([]byte(k)); err != nil || got != want {
			t.Fatalf("%s = %d, %v; want %d", k, got, err, want)
		}
	}
	if got, err := store.Get([]byte("LastVoteCand")); err != nil || string(got) != "n2" {
		t.Fatalf("LastVoteCand = %q, %v", got, err)
	}
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// mustOpenLogStore opens the log store of dataDir as a small node does.
func mustOpenLogStore(t *testing.T, dataDir string) *walStore {
	t.Helper()
	w, err := openLogStore(dataDir, 4<<20, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestBadgerRaftStoreIsCopiedIntoTheWAL(t *testing.T) {
	dir := t.TempDir()
	badgerLog(t, dir, 40, 300)
	w := mustOpenLogStore(t, dir)
	requireCopied(t, w, 40, 300)
	if exists(t, filepath.Join(dir, logDirBadger)) || exists(t, filepath.Join(dir, logDirWALTemp)) {
		t.Fatal("the Badger store or the copy's temporary directory is left")
	}
	// The WAL goes on from the copy, and is what opens next time.
	if err := w.StoreLogs([]*raft.Log{{Index: 301, Term: 9, Type: raft.LogCommand, Data: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w = mustOpenLogStore(t, dir)
	defer w.Close()
	if last, err := w.LastIndex(); err != nil || last != 301 {
		t.Fatalf("last index after reopening %d, %v", last, err)
	}
}

func TestInterruptedCopyStartsAgain(t *testing.T) {
	dir := t.TempDir()
	badgerLog(t, dir, 1, 120)
	// A copy cut off by a crash: a partial WAL in the temporary directory.
	if err := copyBadgerLog(filepath.Join(dir, logDirWALTemp), filepath.Join(dir, logDirBadger), 4<<20, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	partial, err := openWAL(filepath.Join(dir, logDirWALTemp), 4<<20, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := partial.DeleteRange(100, 120); err != nil {
		t.Fatal(err)
	}
	partial.Close()
	w := mustOpenLogStore(t, dir)
	defer w.Close()
	requireCopied(t, w, 1, 120)
}

func TestCrashAfterTheCopyKeepsTheWAL(t *testing.T) {
	dir := t.TempDir()
	badgerLog(t, dir, 1, 80)
	// Copied and renamed, but the Badger store not yet removed.
	if err := copyBadgerLog(filepath.Join(dir, logDirWAL), filepath.Join(dir, logDirBadger), 4<<20, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	w := mustOpenLogStore(t, dir)
	defer w.Close()
	requireCopied(t, w, 1, 80)
	if exists(t, filepath.Join(dir, logDirBadger)) {
		t.Fatal("the copied Badger store is left")
	}
}

func TestEmptyBadgerStoreIsCopied(t *testing.T) {
	dir := t.TempDir()
	s, err := raftbadger.Open(raftbadger.Options{Dir: filepath.Join(dir, logDirBadger), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	w := mustOpenLogStore(t, dir)
	defer w.Close()
	if last, err := w.LastIndex(); err != nil || last != 0 {
		t.Fatalf("last index %d, %v", last, err)
	}
	if exists(t, filepath.Join(dir, logDirBadger)) {
		t.Fatal("the Badger store is left")
	}
}

func TestUnreadableBadgerStoreStopsTheNode(t *testing.T) {
	dir := t.TempDir()
	// A raft/ that cannot be looked at (a symlink to itself): not a new
	// node, so not one to start on an empty log.
	if err := os.Symlink(logDirBadger, filepath.Join(dir, logDirBadger)); err != nil {
		t.Fatal(err)
	}
	if w, err := openLogStore(dir, 4<<20, hclog.NewNullLogger()); err == nil {
		w.Close()
		t.Fatal("opened a log store beside a Badger store it could not read")
	}
	if exists(t, filepath.Join(dir, logDirWAL)) {
		t.Fatal("made an empty raft log")
	}
}
