// Package e2e tests the built lookout binary as separate processes.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lookout/internal/freeport"
	"lookout/internal/waittest"
)

// binary is the lookout binary built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lookout-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "lookout")
	build := exec.Command("go", "build", "-o", binary, "lookout")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build lookout:", err)
		os.Exit(1)
	}
	code := waittest.Main(m) // the tests wait on processes and schedules
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running lookout process with its output captured.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder // stdout
	logf *os.File        // stderr
	done chan struct{}
}

// start runs lookout with args; the process is killed when the test ends.
func start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, name: name, cmd: exec.Command(binary, args...), logf: logf, done: make(chan struct{})}
	p.cmd.Stderr = logf
	p.cmd.Env = append(os.Environ(), "LOOKOUT_ADMIN_TOKEN=") // only flags count here
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			p.mu.Lock()
			p.out.WriteString(s.Text() + "\n")
			p.mu.Unlock()
		}
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s stderr (last 4 KiB):\n%s", name, tail(b, 4096))
		}
	})
	return p
}

// kill sends SIGKILL and waits for the process to end.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proc) stop() error {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
		if !p.cmd.ProcessState.Success() {
			return fmt.Errorf("%s exited: %v", p.name, p.cmd.ProcessState)
		}
		return nil
	case <-time.After(15 * time.Second):
		p.kill()
		return fmt.Errorf("%s did not stop on SIGINT", p.name)
	}
}

// stdout returns what the process printed so far.
func (p *proc) stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitStdout waits until the output contains s.
func (p *proc) waitStdout(s string, timeout time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if out := p.stdout(); strings.Contains(out, s) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("%s did not print %q; printed:\n%s", p.name, s, p.stdout())
	return ""
}

// freeAddr returns a 127.0.0.1 address with a port free for TCP and UDP,
// for a process to bind later (see package freeport).
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
