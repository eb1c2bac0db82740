package cluster

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// crashChildEnv names the data directory a child process of
// TestLogOpensAfterTailTruncationAndKill works in.
const crashChildEnv = "LOOKOUT_TEST_LOG_CRASH_DIR"

// logEntries are entries first..last of term, each with a payload that
// names its index and term.
func logEntries(first, last, term uint64) []*raft.Log {
	var logs []*raft.Log
	for i := first; i <= last; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: fmt.Appendf(nil, "%d@%d", i, term)})
	}
	return logs
}

// TestLogCrashChild is the child process of
// TestLogOpensAfterTailTruncationAndKill: what a leader that is deposed
// with entries it had not replicated does to its log. It stores entries 1
// to 30 of term 1, has their tail 21 to 30 cleared (raft's DeleteRange of
// a follower's conflicting suffix), stores the new leader's 21 to 25 of
// term 2, says so and waits to be killed.
func TestLogCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the child process of TestLogOpensAfterTailTruncationAndKill")
	}
	w, err := openLogStore(dir, 4<<20, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { return w.StoreLogs(logEntries(1, 30, 1)) },
		func() error { return w.DeleteRange(21, 30) },
		func() error { return w.StoreLogs(logEntries(21, 25, 2)) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	time.Sleep(time.Minute) // killed before this ends
}

// TestLogOpensAfterTailTruncationAndKill: a node whose log tail was
// cleared and that is then killed opens its log again, reads every entry
// and takes new ones (raft-wal before v0.4.1 sealed the truncated segment
// without its index, and every later start failed with "sealed segment has
// no index block").
func TestLogOpensAfterTailTruncationAndKill(t *testing.T) {
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestLogCrashChild$")
	child.Env = append(os.Environ(), crashChildEnv+"="+dir)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	child.Process.Kill() // SIGKILL: no Close, as in a crash
	child.Wait()
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("the child process did not get its log ready: %q", line)
	}

	want := append(logEntries(1, 20, 1), logEntries(21, 25, 2)...)
	w := mustOpenLogStore(t, dir)
	requireEntries(t, w, want)
	// It takes new entries, and they are there after a clean restart.
	more := logEntries(26, 40, 2)
	if err := w.StoreLogs(more); err != nil {
		t.Fatalf("store after reopening: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w = mustOpenLogStore(t, dir)
	defer w.Close()
	requireEntries(t, w, append(want, more...))
	if err := verifyLog(w, filepath.Join(dir, logDirWAL)); err != nil {
		t.Fatalf("verifyLog on a good log: %v", err)
	}
}

// requireEntries checks that the log holds exactly want, in order from
// index 1.
func requireEntries(t *testing.T, w raft.LogStore, want []*raft.Log) {
	t.Helper()
	first, err := w.FirstIndex()
	if err != nil || first != 1 {
		t.Fatalf("first index %d, %v; want 1", first, err)
	}
	last, err := w.LastIndex()
	if err != nil || last != uint64(len(want)) {
		t.Fatalf("last index %d, %v; want %d", last, err, len(want))
	}
	for _, e := range want {
		var got raft.Log
		if err := w.GetLog(e.Index, &got); err != nil {
			t.Fatalf("entry %d: %v", e.Index, err)
		}
		if got.Term != e.Term || string(got.Data) != string(e.Data) {
			t.Fatalf("entry %d is term %d %q, want term %d %q", e.Index, got.Term, got.Data, e.Term, e.Data)
		}
	}
}

// TestDamagedLogIsOneClearError: a log that opens but whose entries cannot
// be read stops the node with one line that names the segment file and
// says what to do, instead of raft's panic.
func TestDamagedLogIsOneClearError(t *testing.T) {
	dir := t.TempDir()
	walDir := filepath.Join(dir, logDirWAL)
	w, err := openLogStore(dir, 64<<10, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < 40; i++ { // 40 entries of 8 KiB: several 64 KiB segments
		l := &raft.Log{Index: i + 1, Term: 1, Type: raft.LogCommand, Data: make([]byte, 8<<10)}
		if err := w.StoreLogs([]*raft.Log{l}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	first := segmentFile(walDir, 1)
	if first == "" || segmentFile(walDir, 40) == first {
		t.Fatalf("want several segments, the first holding entry 1; got %q and %q", first, segmentFile(walDir, 40))
	}
	// A sealed segment cut short: its index block is gone.
	if err := os.Truncate(first, 4096); err != nil {
		t.Fatal(err)
	}
	w, err = openLogStore(dir, 64<<10, hclog.NewNullLogger())
	if err == nil {
		w.Close()
		t.Fatal("opened a damaged log")
	}
	msg := err.Error()
	for _, want := range []string{first, "cannot be read", "move its data directory aside", "snapshot restore", "docs/reliability.md"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is more than one line: %q", msg)
	}
}
