package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runExecTest runs lookout exec args in env.
func runExecTest(t *testing.T, env *testEnv, args ...string) error {
	t.Helper()
	return runExecEnv(context.Background(), args, env.ingestEnv)
}

func TestExecFail(t *testing.T) {
	srv := newIngestServer(t)
	env := newTestEnv(srv.URL)
	err := runExecTest(t, env, "backup-db", "--project", "infra", "--", "sh", "-c", "echo out; echo err >&2; sleep 0.01; exit 3")
	if ExitCode(err) != 3 {
		t.Fatalf("error %v, exit code %d", err, ExitCode(err))
	}
	if env.stdout.String() != "out\n" || env.stderr.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", env.stdout, env.stderr)
	}
	evs := srv.received()
	if len(evs) != 2 {
		t.Fatalf("received %+v", evs)
	}
	run, fail := evs[0], evs[1]
	if run.Status != "run" || fail.Status != "fail" || run.Series == "" || run.Series != fail.Series ||
		run.EventID == "" || fail.EventID == "" || run.EventID == fail.EventID {
		t.Errorf("run %+v, fail %+v", run, fail)
	}
	for _, ev := range evs {
		if ev.EventType != "ping" || ev.Monitor != "backup-db" || ev.Host != "test-host" || ev.Project != "infra" || ev.Timestamp == nil {
			t.Errorf("event %+v", ev)
		}
	}
	if run.Duration != nil || run.ExitCode != nil || run.Message != "" {
		t.Errorf("run %+v", run)
	}
	if fail.ExitCode == nil || *fail.ExitCode != 3 || fail.Duration == nil || *fail.Duration < 0.01 ||
		!strings.Contains(fail.Message, "out\n") || !strings.Contains(fail.Message, "err\n") || len(fail.Message) != 8 {
		t.Errorf("fail event: exit code %v, duration %v, message %q", fail.ExitCode, fail.Duration, fail.Message)
	}
}

func TestExecComplete(t *testing.T) {
	srv := newIngestServer(t)
	env := newTestEnv(srv.URL)
	env.stdin = strings.NewReader("from stdin\n")
	env.vars["LOOKOUT_HOST"] = "env-host"
	// Without "--", the command starts at the second positional argument
	// and its own flags are left alone.
	if err := runExecTest(t, env, "copy", "--retry-for", "5s", "cat", "-u"); err != nil {
		t.Fatal(err)
	}
	evs := srv.received()
	if len(evs) != 2 || evs[1].Status != "complete" || *evs[1].ExitCode != 0 || evs[1].Message != "from stdin\n" || evs[1].Host != "env-host" {
		t.Errorf("received %+v", evs)
	}
	if env.stdout.String() != "from stdin\n" {
		t.Errorf("stdout %q", env.stdout)
	}
}

func TestExecKeepsLastOutput(t *testing.T) {
	srv := newIngestServer(t)
	env := newTestEnv(srv.URL)
	if err := runExecTest(t, env, "count", "--", "seq", "1", "30000"); err != nil {
		t.Fatal(err)
	}
	out := env.stdout.String()
	evs := srv.received()
	if len(out) <= outputTail || len(evs) != 2 {
		t.Fatalf("printed %d bytes, received %d events", len(out), len(evs))
	}
	if msg := evs[1].Message; msg != out[len(out)-outputTail:] {
		t.Errorf("message of %d bytes starting %q, want the last %d bytes of the output", len(msg), msg[:min(len(msg), 20)], outputTail)
	}
}

func TestExecServiceUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	env := newTestEnv(srv.URL)
	err := runExecTest(t, env, "nightly", "--", "sh", "-c", "echo ran; exit 5")
	if ExitCode(err) != 5 || env.stdout.String() != "ran\n" {
		t.Errorf("error %v, stdout %q", err, env.stdout)
	}
	if s := env.stderr.String(); !strings.Contains(s, "could not report the start of nightly") || !strings.Contains(s, "could not report the fail of nightly") {
		t.Errorf("stderr %q", s)
	}
	if len(env.clock.slept()) == 0 {
		t.Error("no retries")
	}
}

func TestExecExitCodes(t *testing.T) {
	for _, tc := range []struct {
		command []string
		code    int
		message string
	}{
		{[]string{"lookout-test-no-such-command"}, 127, "executable file not found"},
		{[]string{"/dev/null"}, 126, "permission denied"},
		{[]string{"sh", "-c", "kill -TERM $$"}, 128 + int(syscall.SIGTERM), ""},
	} {
		srv := newIngestServer(t)
		env := newTestEnv(srv.URL)
		err := runExecTest(t, env, append([]string{"job", "--"}, tc.command...)...)
		evs := srv.received()
		if ExitCode(err) != tc.code || len(evs) != 2 || evs[1].Status != "fail" || *evs[1].ExitCode != tc.code ||
			!strings.Contains(evs[1].Message, tc.message) {
			t.Errorf("%q: error %v (exit code %d), events %+v", tc.command, err, ExitCode(err), evs)
		}
	}
}

// signalWhen is a writer that sends sig to this process once it has seen
// text, then passes on what it got to w.
type signalWhen struct {
	mu   sync.Mutex
	w    bytes.Buffer
	text string
	sent bool
}

func (s *signalWhen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(p)
	if !s.sent && strings.Contains(s.w.String(), s.text) {
		s.sent = true
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func TestExecForwardsSignals(t *testing.T) {
	srv := newIngestServer(t)
	env := newTestEnv(srv.URL)
	out := &signalWhen{text: "ready"}
	env.ingestEnv.stdout = out
	script := `trap 'echo stopping; exit 42' TERM; echo ready; while :; do sleep 1 >/dev/null 2>&1 & wait $!; done`
	done := make(chan error, 1)
	go func() { done <- runExecTest(t, env, "daemon", "--", "sh", "-c", script) }()
	select {
	case err := <-done:
		if ExitCode(err) != 42 {
			t.Errorf("error %v, exit code %d", err, ExitCode(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop on SIGTERM")
	}
	evs := srv.received()
	if len(evs) != 2 || *evs[1].ExitCode != 42 || evs[1].Message != "ready\nstopping\n" {
		t.Errorf("received %+v", evs)
	}
}

func TestExecUsage(t *testing.T) {
	srv := newIngestServer(t)
	for _, args := range [][]string{
		{},
		{"job"},
		{"job", "--"},
		{"--", "true"},
		{"job", "--bogus", "--", "true"},
	} {
		err := runExecEnv(context.Background(), args, newTestEnv(srv.URL).ingestEnv)
		if ExitCode(err) != 2 {
			t.Errorf("%q: error %v, want a usage error", args, err)
		}
	}
	env := newTestEnv(srv.URL)
	if err := runExecEnv(context.Background(), []string{"-h"}, env.ingestEnv); err != nil || !strings.Contains(env.stdout.String(), "-retry-for") {
		t.Errorf("-h: %v, printed %q", err, env.stdout)
	}
	if n := len(srv.received()); n != 0 {
		t.Errorf("%d events sent", n)
	}
}

func TestExitCode(t *testing.T) {
	if got := ExitCode(fmt.Errorf("wrapped: %w", exitError{code: 9})); got != 9 {
		t.Errorf("exit code %d, want 9", got)
	}
	if got := ExitCode(errors.New("other")); got != 1 {
		t.Errorf("exit code %d, want 1", got)
	}
}

func TestTailBuffer(t *testing.T) {
	b := newTailBuffer(8)
	b.Write([]byte("abc"))
	if b.String() != "abc" {
		t.Errorf("%q", b.String())
	}
	b.Write([]byte("defghij"))
	b.Write([]byte("k"))
	if b.String() != "defghijk" {
		t.Errorf("%q", b.String())
	}
	b.Write([]byte("0123456789xyz"))
	if b.String() != "56789xyz" {
		t.Errorf("%q, want the last 8 bytes", b.String())
	}
	// A character cut at the start is left out.
	b = newTailBuffer(4)
	b.Write([]byte("aé€"))
	if b.String() != "€" {
		t.Errorf("%q", b.String())
	}
	// Invalid bytes become U+FFFD, still within the size.
	b.Write([]byte("ab\xff\xfe"))
	if b.String() != "b\uFFFD" {
		t.Errorf("%q", b.String())
	}
}

// A run that created its monitor says so on stderr; stdout stays the
// command's.
func TestExecCreatedMonitor(t *testing.T) {
	srv := newIngestServer(t, answer{status: 200, body: `{"status":"success","created":true}`})
	env := newTestEnv(srv.URL)
	if err := runExecTest(t, env, "nightly-bakup", "--", "sh", "-c", "echo out"); err != nil {
		t.Fatal(err)
	}
	if env.stdout.String() != "out\n" || !strings.Contains(env.stderr.String(), "lookout exec: created monitor nightly-bakup: a new name; was it mistyped?") {
		t.Errorf("stdout %q, stderr %q", env.stdout, env.stderr)
	}
}
