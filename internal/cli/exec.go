package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"lookout/internal/client"
)

const (
	// outputTail is how much of the command's output is sent as the message.
	outputTail = 64 << 10
	// outputWaitDelay is how long to wait, once the command exited, for the
	// processes it left behind to close its output.
	outputWaitDelay = time.Second
)

// exitError ends the process with code: lookout exec passes on the exit
// code of its command.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

const execUsage = `Usage: lookout exec MONITOR [flags] -- COMMAND [ARG...]

Run COMMAND and report it to MONITOR: run as it starts (sent alongside: the
command runs even when the service cannot be reached), then complete (exit 0)
or fail with the duration, exit code, host and last 64 KiB of output, both
with one random series. Stdin, stdout and stderr are passed through, SIGINT
and SIGTERM passed on. Exits with COMMAND's exit code (128+N when signal N
ended it, 127 when not found, 126 when it could not start). Every flag also
reads LOOKOUT_<FLAG>. Stdout is the command's; when the run created its
monitor (a name the account did not have, perhaps mistyped), stderr says so.

Flags:
`

// runExec runs lookout exec with the process environment.
func runExec(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runExecEnv(ctx, args, processIngestEnv(getenv, stdout, stderr))
}

func runExecEnv(ctx context.Context, args []string, env ingestEnv) error {
	fs := newAdminFlagSet("lookout exec")
	conn := addIngestFlags(fs)
	host := fs.String("host", "", "host that runs the job (default: this host's name)")
	project := fs.String("project", "", "project to group the monitor under")
	if err := parseWithEnv(fs, nil, env.getenv); err != nil {
		return usageError{fmt.Sprintf("exec: %v", err)}
	}
	monitor, command, err := parseExecArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(env.stdout, execUsage)
		return printDefaults(env.stdout, fs)
	}
	if err != nil {
		return err
	}
	ing, err := conn.client()
	if err != nil {
		return err
	}
	env.stderr = &lockedWriter{w: env.stderr} // the command and the run report share it
	warn := func(format string, a ...any) { fmt.Fprintf(env.stderr, "lookout exec: "+format+"\n", a...) }

	// After the command ended, a signal stops the reporting.
	reportCtx, stopReporting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopReporting()
	fwd := forwardSignals(stopReporting)
	defer fwd.stop()
	if err := ctx.Err(); err != nil {
		return err // a signal came before the command could start
	}

	base := client.Event{EventType: "ping", Monitor: monitor, Host: hostOr(*host, env), Project: *project, Series: newID()}
	start := time.Now()
	run := base
	run.Status, run.EventID, run.Timestamp = "run", newID(), new(start.Unix())
	runReported := make(chan struct{})
	go func() {
		defer close(runReported)
		res, err := env.retry.send(ctx, ing, run, conn.retryFor, nil)
		if err != nil && ctx.Err() == nil {
			warn("could not report the start of %s (the command runs all the same): %v", monitor, err)
		}
		if err == nil && res.Created {
			warn("created monitor %s: a new name; was it mistyped? (lookout monitors list shows the account's monitors)", monitor)
		}
	}()

	tail := newTailBuffer(outputTail)
	code, startErr := runCommand(command, env, tail, fwd)
	duration := time.Since(start).Seconds()
	<-runReported // the run goes first

	end := base
	end.Status, end.EventID, end.Timestamp = "complete", newID(), new(time.Now().Unix())
	end.Duration, end.ExitCode, end.Message = &duration, &code, tail.String()
	if startErr != nil {
		end.Message = "lookout exec: " + startErr.Error()
	}
	if code != 0 {
		end.Status = "fail"
	}
	if _, err := env.retry.send(reportCtx, ing, end, conn.retryFor, nil); err != nil {
		warn("could not report the %s of %s: %v", end.Status, monitor, err)
	}
	switch {
	case startErr != nil:
		return exitError{code, fmt.Sprintf("exec: %v", startErr)}
	case code != 0:
		return exitError{code, fmt.Sprintf("exec: %s exited with code %d", command[0], code)}
	}
	return nil
}

// parseExecArgs parses the flags and MONITOR, which come in any order,
// and returns the command: what follows "--", or else the second
// positional argument and everything after it.
func parseExecArgs(fs *flag.FlagSet, args []string) (monitor string, command []string, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", nil, err
			}
			return "", nil, usageError{fmt.Sprintf("exec: %v (see lookout exec -h)", err)}
		}
		rest := fs.Args()
		dashes := len(rest) < len(args) && args[len(args)-len(rest)-1] == "--"
		if monitor != "" || dashes {
			command = rest
			break
		}
		if len(rest) == 0 {
			break
		}
		monitor, args = rest[0], rest[1:]
	}
	switch {
	case monitor == "":
		return "", nil, usageError{"exec: no MONITOR given (see lookout exec -h)"}
	case len(command) == 0:
		return "", nil, usageError{"exec: no command given: lookout exec MONITOR [flags] -- COMMAND [ARG...]"}
	}
	return monitor, command, nil
}

// runCommand runs command with env's stdin, stdout and stderr, its output
// also written to tail. It returns the exit code: the command's own,
// 128+N when signal N ended it, or 127 (not found) or 126 with the reason
// when it could not start.
func runCommand(command []string, env ingestEnv, tail io.Writer, fwd *signalForwarder) (int, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin = env.stdin
	cmd.Stdout = io.MultiWriter(tail, env.stdout)
	cmd.Stderr = io.MultiWriter(tail, env.stderr)
	cmd.WaitDelay = outputWaitDelay
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127, err
		}
		return 126, err
	}
	fwd.started(cmd.Process)
	err := cmd.Wait() // the exit status is in ProcessState; an output error does not change it
	fwd.exited()
	st := cmd.ProcessState
	if st == nil {
		return 1, fmt.Errorf("wait for the command: %w", err)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return st.ExitCode(), nil
}

// signalForwarder passes SIGINT and SIGTERM on to the command while it
// runs (a signal that comes before it starts is passed on as it starts);
// once the command has ended, a signal calls afterExit.
type signalForwarder struct {
	mu        sync.Mutex
	proc      *os.Process
	pending   os.Signal
	ended     bool
	afterExit func()
	sigs      chan os.Signal
	done      chan struct{}
}

func forwardSignals(afterExit func()) *signalForwarder {
	f := &signalForwarder{afterExit: afterExit, sigs: make(chan os.Signal, 4), done: make(chan struct{})}
	signal.Notify(f.sigs, os.Interrupt, syscall.SIGTERM)
	go f.loop()
	return f
}

func (f *signalForwarder) loop() {
	for {
		select {
		case s := <-f.sigs:
			f.mu.Lock()
			switch {
			case f.ended:
				f.afterExit()
			case f.proc != nil:
				_ = f.proc.Signal(s)
			default:
				f.pending = s
			}
			f.mu.Unlock()
		case <-f.done:
			return
		}
	}
}

func (f *signalForwarder) started(p *os.Process) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.proc = p
	if f.pending != nil {
		_ = p.Signal(f.pending)
	}
}

func (f *signalForwarder) exited() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.proc, f.ended = nil, true
}

func (f *signalForwarder) stop() {
	signal.Stop(f.sigs)
	close(f.done)
}

// lockedWriter lets goroutines share a writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// tailBuffer keeps the last len(buf) bytes written to it; writers may
// share it.
type tailBuffer struct {
	mu   sync.Mutex
	buf  []byte
	next int // where the next byte goes
	full bool
}

func newTailBuffer(size int) *tailBuffer { return &tailBuffer{buf: make([]byte, size)} }

// Write keeps the end of p; it never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) > len(t.buf) {
		p = p[len(p)-len(t.buf):]
	}
	for len(p) > 0 {
		c := copy(t.buf[t.next:], p)
		p, t.next = p[c:], t.next+c
		if t.next == len(t.buf) {
			t.next, t.full = 0, true
		}
	}
	return n, nil
}

// String returns the bytes kept, oldest first, as valid UTF-8 of at most
// len(buf) bytes: invalid bytes become U+FFFD, and when older bytes were
// dropped it starts at the first whole character.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	b := make([]byte, 0, len(t.buf))
	if t.full {
		b = append(b, t.buf[t.next:]...)
	}
	b = append(b, t.buf[:t.next]...)
	t.mu.Unlock()
	cut := t.full
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
		if len(b) > len(t.buf) {
			b, cut = b[len(b)-len(t.buf):], true
		}
	}
	for i := 0; cut && i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return string(b)
}
