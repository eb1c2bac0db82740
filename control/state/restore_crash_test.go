package state

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// bigState is the snapshot of a store with most of its keys after
// meta:applied in key order (mon:, mon-name:), so that a stream cut late
// breaks after its meta:applied record went by, and a load spans several
// memtables; and the store's applied index. It is built once for the
// package's tests (applying 7,500 monitors takes seconds under -race).
func bigState(t *testing.T) ([]byte, uint64) {
	t.Helper()
	bigStateOnce.Lock()
	defer bigStateOnce.Unlock()
	if bigStateOnce.snap == nil {
		s := openStore(t)
		mustOK(t, s, newAccount("a"))
		pad := strings.Repeat("é", 200) // a record of about 500 bytes, kept inline
		// 500 a command: with their audit entries, a Small transaction's worth.
		for b := range 30 {
			ms := minimalPings(MaxPutMonitors / 2)
			for i, m := range ms {
				m.Uuid = fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", b, i)
				m.Name = fmt.Sprintf("job-%d-%d", b, i)
				m.DisplayName = pad
			}
			mustOK(t, s, putMonitorsCmd("a", ms, nil))
		}
		bigStateOnce.snap, bigStateOnce.index = dump(t, s), s.AppliedIndex()
	}
	return bigStateOnce.snap, bigStateOnce.index
}

var bigStateOnce struct {
	sync.Mutex
	snap  []byte
	index uint64
}

// TestRestoreCrashMidwayDoesNotClaimTheSnapshot: a restore that stops half
// way (the stream breaks, late, after the applied index went by; then the
// node dies) leaves the old state in use, whole, with its applied index
// below the snapshot's, so that the node restores it again at start
// (cluster's catchUpFromSnapshot) instead of running on a half state; the
// next restore brings it to the snapshot's state.
func TestRestoreCrashMidwayDoesNotClaimTheSnapshot(t *testing.T) {
	t.Parallel() // heavy: overlaps the package's other heavy tests
	snap, index := bigState(t)
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
			if _, err := dst.Account("other"); err != nil {
				t.Fatalf("the state in use after a failed restore: %v", err)
			}
			requireGenerations(t, dir, 1)
			// The node dies; it starts again from disk.
			if err := dst.Close(); err != nil {
				t.Fatal(err)
			}
			dst = openStoreAt(t, dir)
			if dst.AppliedIndex() >= index {
				t.Fatalf("applied index %d on disk after a failed restore of %d", dst.AppliedIndex(), index)
			}
			if _, err := dst.Account("other"); err != nil {
				t.Fatalf("the state on disk after a failed restore: %v", err)
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

// Environment of TestRestoreCrashChild: the state directory it restores
// into, the snapshot file it restores, and the stage it is killed at.
const (
	crashDirEnv   = "LOOKOUT_TEST_RESTORE_CRASH_DIR"
	crashSnapEnv  = "LOOKOUT_TEST_RESTORE_CRASH_SNAPSHOT"
	crashStageEnv = "LOOKOUT_TEST_RESTORE_CRASH_STAGE"
)

// TestRestoreCrashChild is the child process of
// TestRestoreKilledAtEachStage: it restores the snapshot file into the
// state directory, says "ready" at the stage it was given and waits to be
// killed. Stage "loading" stops the stream half way.
func TestRestoreCrashChild(t *testing.T) {
	dir, stage := os.Getenv(crashDirEnv), os.Getenv(crashStageEnv)
	if dir == "" {
		t.Skip("the child process of TestRestoreKilledAtEachStage")
	}
	snap, err := os.ReadFile(os.Getenv(crashSnapEnv))
	if err != nil {
		t.Fatal(err)
	}
	wait := func() {
		fmt.Println("ready")
		time.Sleep(time.Minute) // killed before this ends
	}
	s, err := Open(Options{Dir: dir, Small: true, restoreHook: func(at string) {
		if at == stage {
			wait()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = bytes.NewReader(snap)
	if stage == "loading" {
		r = io.MultiReader(bytes.NewReader(snap[:len(snap)/2]), readerFunc(func([]byte) (int, error) {
			wait()
			return 0, io.EOF
		}))
	}
	err = s.Restore(r)
	t.Fatalf("restore was not killed at stage %s: %v", stage, err)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestRestoreKilledAtEachStage: a node killed (SIGKILL, no Close) while
// it restores a snapshot opens its state again. Killed before CURRENT
// names the new state (half way through the stream, or with the stream
// loaded), it has its old state, whole, behind the snapshot, so that it
// restores the snapshot again at start (cluster's catchUpFromSnapshot);
// killed after, it has the snapshot's state. Either way the other
// database is gone.
func TestRestoreKilledAtEachStage(t *testing.T) {
	t.Parallel() // heavy: overlaps the package's other heavy tests
	snap, index := bigState(t)
	snapFile := filepath.Join(t.TempDir(), "snapshot")
	if err := os.WriteFile(snapFile, snap, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, stage := range []string{"loading", "loaded", "pointed"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			s := openStoreAt(t, dir)
			mustOK(t, s, newAccount("other"))
			s.Close()

			child := exec.Command(os.Args[0], "-test.run=^TestRestoreCrashChild$")
			child.Env = append(os.Environ(), crashDirEnv+"="+dir, crashSnapEnv+"="+snapFile, crashStageEnv+"="+stage)
			child.Stderr = os.Stderr
			out, err := child.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			child.Process.Kill()
			child.Wait()
			if strings.TrimSpace(line) != "ready" {
				t.Fatalf("the child process did not reach stage %s: %q", stage, line)
			}
			if gens := generations(t, dir); len(gens) != 2 {
				t.Fatalf("killed at %s with generations %v: the test does not leave a second one", stage, gens)
			}

			s = openStoreAt(t, dir)
			requireGenerations(t, dir, 1)
			if stage == "pointed" {
				if s.AppliedIndex() != index || !bytes.Equal(dump(t, s), snap) {
					t.Fatalf("killed after the swap: applied %d (want %d), state is the snapshot's: %v", s.AppliedIndex(), index, bytes.Equal(dump(t, s), snap))
				}
				mustOK(t, s, newAccount("next"))
				return
			}
			if s.AppliedIndex() >= index {
				t.Fatalf("killed at %s: applied index %d claims the snapshot's %d", stage, s.AppliedIndex(), index)
			}
			if _, err := s.Account("other"); err != nil {
				t.Fatalf("killed at %s: the old state lost an account: %v", stage, err)
			}
			// Behind the snapshot: the node restores it again.
			if err := s.Restore(bytes.NewReader(snap)); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s = openStoreAt(t, dir)
			if s.AppliedIndex() != index || !bytes.Equal(dump(t, s), snap) {
				t.Fatalf("after restoring again: applied %d, state is the snapshot's: %v", s.AppliedIndex(), bytes.Equal(dump(t, s), snap))
			}
			requireGenerations(t, dir, 1)
		})
	}
}
