package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestDevNodeCreatesDemoAccountOnceAndKeepsData runs lookout control --dev
// twice on one data directory.
func TestDevNodeCreatesDemoAccountOnceAndKeepsData(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	args := []string{"control", "--dev", "--data-dir", dataDir, "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn"}

	first := start(t, "dev1", args...)
	out := first.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `is up at (http://[0-9.:]+)`)
	adminToken := match(t, out, `admin token:\s+(adm_[a-z0-9]+)`)
	for _, re := range []string{`e-mail:\s+demo@lookout\.local`, `password:\s+\S{8,}`, `ingest key:\s+ck_[a-z0-9]{32,}`, `management key:\s+mk_[a-z0-9]{32,}`} {
		match(t, out+" (x)", "("+re+")")
	}
	// The printed ingest key works with the CLI: a ping, and a command run
	// under lookout exec keeps its exit code.
	ingestKey := match(t, out, `ingest key:\s+(ck_[a-z0-9]+)`)
	env := append(os.Environ(), "LOOKOUT_ADDR="+base, "LOOKOUT_INGEST_KEY="+ingestKey)
	ping := exec.Command(binary, "ping", "nightly-backup", "--status", "complete", "--duration", "12.5")
	ping.Env = env
	if out, err := ping.CombinedOutput(); err != nil {
		t.Fatalf("lookout ping: %v\n%s", err, out)
	}
	run := exec.Command(binary, "exec", "nightly-report", "--", "sh", "-c", "echo working; exit 7")
	run.Env = env
	if err := run.Run(); run.ProcessState.ExitCode() != 7 {
		t.Fatalf("lookout exec exited %d (%v), want the command's 7", run.ProcessState.ExitCode(), err)
	}
	// Config as code with the printed management key: apply a YAML bundle,
	// then a dry run of the same file shows no change (exit 0), and the
	// OpenAPI document is served.
	bundle := filepath.Join(t.TempDir(), "monitors.yaml")
	os.WriteFile(bundle, []byte("manifest_version: 1\nmonitors:\n  - kind: ping\n    name: nightly-backup\n    timeout_seconds: 7200\n"), 0o644)
	env = append(env, "LOOKOUT_MANAGEMENT_KEY="+match(t, out, `management key:\s+(mk_[a-z0-9]+)`))
	for _, args := range [][]string{{"apply", "-f", bundle}, {"apply", "-f", bundle, "--dry-run"}} {
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("lookout %v: %v\n%s", args, err, out)
		}
	}
	if resp, err := http.Get(base + "/openapi.json"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("openapi.json: %v %v", resp, err)
	}
	resp, err := http.Get(base + "/health")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %v %v", resp, err)
	}
	resp.Body.Close()
	admin := client.NewAdmin(base, adminToken, nil)
	acct, err := admin.CreateAccount(ctxT(t, 10*time.Second), client.CreateAccountRequest{Email: "kept@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	second := start(t, "dev2", args...)
	out = second.waitStdout("Next:", 30*time.Second)
	for _, secret := range []string{"adm_", "ck_", "mk_", "password:"} {
		if strings.Contains(out, secret) {
			t.Fatalf("restart printed a secret (%q):\n%s", secret, out)
		}
	}
	base = match(t, out, `is up at (http://[0-9.:]+)`)
	admin = client.NewAdmin(base, adminToken, nil)
	got, err := admin.GetAccount(ctxT(t, 10*time.Second), acct.ID, false)
	if err != nil || got.Email != "kept@example.com" {
		t.Fatalf("account after restart: %+v %v", got, err)
	}
}

// match returns the first group of re in s, failing the test without one.
func match(t *testing.T, s, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("output does not match %s:\n%s", re, s)
	}
	return m[1]
}
