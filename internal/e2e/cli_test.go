package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDevNodeCLI follows a new user: the commands a dev node prints under
// "Next:" work as printed, a ping of a new name says it created a monitor,
// the monitor is read back by name with its status and events, an account
// made without a password says nobody can sign in yet, and every -h ends
// cleanly.
func TestDevNodeCLI(t *testing.T) {
	t.Parallel()
	dev := start(t, "dev", "control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn")
	out := dev.waitStdout("Next:", 30*time.Second)
	next := out[strings.Index(out, "Next:"):]

	// The printed ping and monitors get, run as printed (bin/lookout is the
	// binary the test built).
	shell := func(line string) (stdout, stderr string, err error) {
		t.Helper()
		cmd := exec.Command("sh", "-c", strings.Replace(strings.TrimSpace(line), "bin/lookout", binary, 1))
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}
	pingLine := match(t, next, `(?m)^\s*(LOOKOUT_ADDR=\S+ LOOKOUT_INGEST_KEY=ck_\S+ bin/lookout ping nightly-backup --status complete)$`)
	stdout, stderr, err := shell(pingLine)
	if err != nil || stdout != "ok: nightly-backup complete\ncreated monitor nightly-backup: a new name; was it mistyped? (lookout monitors list shows the account's monitors)\n" {
		t.Fatalf("%s: %v\nstdout %q\nstderr %q", pingLine, err, stdout, stderr)
	}
	if stdout, _, err = shell(pingLine + " -v"); err != nil || stdout != "ok: nightly-backup complete\n" {
		t.Fatalf("second ping: %v %q", err, stdout)
	}
	getLine := match(t, next, `(?m)^\s*(LOOKOUT_ADDR=\S+ LOOKOUT_MANAGEMENT_KEY=mk_\S+ bin/lookout monitors get nightly-backup)$`)
	if stdout, stderr, err = shell(getLine); err != nil || !regexp.MustCompile(`^ping nightly-backup \(\S+\)\n  state:\s+up\n  last ping:\s+\S+Z \((now|\d+s ago)\)\n`).MatchString(stdout) {
		t.Fatalf("%s: %v\nstdout %q\nstderr %q", getLine, err, stdout, stderr)
	}
	eventsLine := strings.Replace(getLine, "monitors get", "monitors events", 1)
	if stdout, _, err = shell(eventsLine); err != nil || strings.Count(stdout, " complete ") != 2 || !strings.HasPrefix(stdout, "TIME ") {
		t.Fatalf("%s: %v\n%s", eventsLine, err, stdout)
	}
	if stdout, _, err = shell(strings.Replace(getLine, "monitors get nightly-backup", "monitors list", 1)); err != nil ||
		!regexp.MustCompile(`(?m)^ping\s+nightly-backup\s+up\s+true\s+\S+\s+\S+$`).MatchString(stdout) {
		t.Fatalf("monitors list: %v\n%s", err, stdout)
	}

	// The operator: an account without a password, and the list.
	adminLine := match(t, next, `(?m)^\s*(LOOKOUT_ADDR=\S+ LOOKOUT_ADMIN_TOKEN=\$\(cat \S+\) bin/lookout admin) cluster$`)
	stdout, stderr, err = shell(adminLine + " account create --email ops@example.com")
	if err != nil || !strings.Contains(stdout, `"ingest_key": "ck_`) ||
		!regexp.MustCompile(`nobody can sign in to the panel as ops@example.com until one is set:\n  lookout admin account password \S+ --password NEW\n$`).MatchString(stderr) {
		t.Fatalf("account create: %v\nstdout %s\nstderr %q", err, stdout, stderr)
	}
	if stdout, _, err = shell(adminLine + " account list"); err != nil || !strings.Contains(stdout, `"email": "ops@example.com"`) || !strings.Contains(stdout, `"email": "demo@lookout.local"`) {
		t.Fatalf("account list: %v\n%s", err, stdout)
	}

	// -h: usage on stdout, exit 0, no "flag: help requested".
	for _, args := range [][]string{{"agent", "-h"}, {"control", "-h"}, {"ping", "-h"}, {"monitors", "events", "-h"}} {
		cmd := exec.Command(binary, args...)
		cmd.Env = os.Environ()
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil || !strings.Contains(o.String(), "Usage") || strings.Contains(o.String()+e.String(), "help requested") {
			t.Errorf("lookout %s: %v\nstdout %q\nstderr %q", strings.Join(args, " "), err, firstLines(o.String()), e.String())
		}
	}
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 3)
	return strings.Join(lines[:min(2, len(lines))], "\n")
}
