package buffer

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crashDirEnv, when set, makes TestCrashHelper the appending child process
// of TestCrashKeepsReturnedAppends.
const crashDirEnv = "LOOKOUT_BUFFER_CRASH_DIR"

// TestCrashHelper is the child: 16 goroutines append events to the buffer
// in $LOOKOUT_BUFFER_CRASH_DIR and print each event's id once its append
// returned, until the parent kills the process.
func TestCrashHelper(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("the child of TestCrashKeepsReturnedAppends")
	}
	b, err := Open(Options{Dir: dir, Small: true})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	for g := range 16 {
		go func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("g%d-%d", g, i)
				if err := b.AppendEvent(event(id, 100)); err != nil {
					fmt.Println("append:", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Println("ok", id)
				mu.Unlock()
			}
		}()
	}
	select {}
}

// TestCrashKeepsReturnedAppends kills (SIGKILL) a process appending from 16
// goroutines, then reopens its buffer: every append that had returned is
// there, each goroutine's events in its order, and new sequence numbers
// follow the old ones.
func TestCrashKeepsReturnedAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	returned := map[string]bool{}
	sc := bufio.NewScanner(out)
	deadline := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		id, ok := strings.CutPrefix(sc.Text(), "ok ")
		if !ok {
			t.Fatalf("child: %s", sc.Text())
		}
		returned[id] = true
		if len(returned) == 2000 {
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	cmd.Wait()
	if len(returned) < 2000 {
		t.Fatalf("the child acknowledged %d appends before it ended", len(returned))
	}

	b := open(t, dir, 0)
	defer b.Close()
	all, err := b.Events(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	next := map[string]int{} // per goroutine, the next index expected at least
	var lastSeq uint64
	for _, e := range all {
		id := e.Event.GetEventId()
		if seen[id] {
			t.Fatalf("%s held twice", id)
		}
		seen[id] = true
		var g, i int
		fmt.Sscanf(id, "g%d-%d", &g, &i)
		key := fmt.Sprint(g)
		if i < next[key] {
			t.Fatalf("%s after a later event of its goroutine", id)
		}
		next[key] = i + 1
		lastSeq = e.Seq
	}
	for id := range returned {
		if !seen[id] {
			t.Fatalf("%s was acknowledged by the append but is not in the buffer after the crash", id)
		}
	}
	t.Logf("%d appends returned before the kill, %d events held after it", len(returned), len(all))
	if err := b.AppendEvent(event("after", 0)); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Events(0, 0); got[len(got)-1].Seq <= lastSeq {
		t.Fatalf("seq %d after the crash, last before it %d", got[len(got)-1].Seq, lastSeq)
	}
}
