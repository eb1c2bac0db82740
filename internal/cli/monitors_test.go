package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/manage"
	"lookout/internal/client"
	"lookout/internal/manifest"
)

// manageServer is the real Management API over a real state store, with
// one account, counting the requests it gets. The clock is fixed, so the
// key has 60 requests.
type manageServer struct {
	srv      *controltest.Server
	url      string
	key      string
	account  string
	requests atomic.Int64
}

func newManageServer(t *testing.T) *manageServer {
	t.Helper()
	s := &manageServer{srv: controltest.NewServer(t)}
	acct, err := s.srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	s.key, s.account = acct.ManagementKey, acct.ID
	s.srv.MarkKeyUsed(t, s.key) // so that requests write only what they are for
	mux := http.NewServeMux()
	manage.New(manage.Options{Cluster: s.srv.Cluster, State: s.srv.Store, Now: func() time.Time { return s.srv.Now }}).Register(mux)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

// client is a Management API client of the account.
func (s *manageServer) client() *client.Manage { return client.NewManage(s.url, s.key, nil) }

// create adds a monitor and returns its uuid.
func (s *manageServer) create(t *testing.T, m manifest.Manifest) string {
	t.Helper()
	got, err := s.client().CreateMonitor(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return got.UUID
}

// run runs lookout CMD args (export, apply or monitors) with stdin and
// LOOKOUT_ADDR and LOOKOUT_MANAGEMENT_KEY set for s.
func (s *manageServer) run(cmd, stdin string, args ...string) (stdout, stderr string, err error) {
	vars := map[string]string{"LOOKOUT_ADDR": s.url, "LOOKOUT_MANAGEMENT_KEY": s.key}
	var out, errOut bytes.Buffer
	env := manageEnv{getenv: func(k string) string { return vars[k] }, stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut,
		now: func() time.Time { return s.srv.Now.Add(5 * time.Minute) }}
	run := map[string]func(context.Context, []string, manageEnv) error{"export": runExportEnv, "apply": runApplyEnv, "monitors": runMonitorsEnv, "sync": runSyncEnv}[cmd]
	err = run(context.Background(), args, env)
	return out.String(), errOut.String(), err
}

func TestMonitorsCommands(t *testing.T) {
	s := newManageServer(t)
	backup := s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "backup", Enabled: true, TimeoutSeconds: 600, Schedule: "30 2 * * *", Timezone: "Europe/Berlin"})
	site := s.create(t, manifest.Manifest{Kind: manifest.KindHTTP, Name: "site", Schedule: "5m",
		Config: manifest.Config{URL: "https://example.com/", ExpectedStatus: new(200)}})
	hourly := s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "hourly", Enabled: true, TimeoutSeconds: 60, ExpectedIntervalSeconds: new(int64(3600))})

	out, _, err := s.run("monitors", "", "list")
	want := "KIND        NAME    STATE   ENABLED  SCHEDULE                    UUID\n" +
		"http_check  site    paused  false    every 5m                    " + site + "\n" +
		"ping        backup  new     true     30 2 * * * (Europe/Berlin)  " + backup + "\n" +
		"ping        hourly  new     true     every 3600s                 " + hourly + "\n"
	if err != nil || out != want {
		t.Fatalf("list: %v\n%s\nwant\n%s", err, out, want)
	}
	out, _, err = s.run("monitors", "", "list", "--kind", "http_check", "--json")
	var listed struct{ Monitors []manifest.Manifest }
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Monitors) != 1 || listed.Monitors[0].UUID != site {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	out, _, err = s.run("monitors", "", "get", backup, "--json")
	var got client.MonitorWithStatus
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || got.Name != "backup" || got.TimeoutSeconds != 600 || got.UUID != backup ||
		got.Status == nil || got.Status.State != "new" {
		t.Fatalf("get: %v\n%s", err, out)
	}

	// Without --confirm nothing is sent, exit 2.
	before := s.requests.Load()
	_, _, err = s.run("monitors", "", "delete", backup)
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), "--confirm") || s.requests.Load() != before {
		t.Fatalf("delete without --confirm: %v (exit %d), %d requests", err, ExitCode(err), s.requests.Load()-before)
	}
	if out, _, err := s.run("monitors", "", "delete", backup, "--confirm"); err != nil || out != "Deleted monitor "+backup+".\n" {
		t.Fatalf("delete: %v %q", err, out)
	}
	_, _, err = s.run("monitors", "", "get", backup)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || ExitCode(err) != 1 {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestManageUsageErrors(t *testing.T) {
	s := newManageServer(t)
	for _, tc := range []struct {
		cmd  string
		args []string
		msg  string
	}{
		{"monitors", nil, "no command"},
		{"monitors", []string{"frob"}, "unknown command"},
		{"monitors", []string{"get"}, "want 1 argument"},
		{"monitors", []string{"list", "--kind"}, "flag needs an argument"},
		{"apply", nil, "-f FILE is required"},
		{"apply", []string{"-f", "x.yaml", "--format", "toml"}, "want yaml or json"},
		{"export", []string{"extra"}, "unexpected argument"},
	} {
		before := s.requests.Load()
		if _, _, err := s.run(tc.cmd, "", tc.args...); ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.msg) || s.requests.Load() != before {
			t.Errorf("%s %q: %v (exit %d), want a usage error with %q", tc.cmd, tc.args, err, ExitCode(err), tc.msg)
		}
	}
	// No key: a usage error naming the variable.
	var out bytes.Buffer
	env := manageEnv{getenv: func(k string) string { return map[string]string{"LOOKOUT_ADDR": s.url}[k] }, stdout: &out, stderr: &out}
	if err := runMonitorsEnv(context.Background(), []string{"list"}, env); ExitCode(err) != 2 || !strings.Contains(err.Error(), "LOOKOUT_MANAGEMENT_KEY") {
		t.Errorf("no key: %v", err)
	}
	// -h prints usage to stdout, exit 0.
	for _, cmd := range []string{"export", "apply", "monitors"} {
		args := []string{"-h"}
		if cmd == "monitors" {
			args = []string{"list", "-h"}
		}
		if stdout, _, err := s.run(cmd, "", args...); err != nil || !strings.Contains(stdout, "Usage: lookout "+cmd) || !strings.Contains(stdout, "-management-key") {
			t.Errorf("%s -h: %v\n%s", cmd, err, stdout)
		}
	}
	// The environment sets only the connection flags.
	vars := map[string]string{"LOOKOUT_ADDR": s.url, "LOOKOUT_MANAGEMENT_KEY": s.key, "LOOKOUT_CONFIRM": "true"}
	env = manageEnv{getenv: func(k string) string { return vars[k] }, stdout: &out, stderr: &out}
	if err := runMonitorsEnv(context.Background(), []string{"delete", "some-uuid"}, env); ExitCode(err) != 2 {
		t.Errorf("LOOKOUT_CONFIRM was read: %v", err)
	}
}

// TestMainDispatch runs the commands through Main, with the process
// environment.
func TestMainDispatch(t *testing.T) {
	s := newManageServer(t)
	s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "backup", Enabled: true, TimeoutSeconds: 600})
	t.Setenv("LOOKOUT_ADDR", strings.TrimPrefix(s.url, "http://"))
	t.Setenv("LOOKOUT_MANAGEMENT_KEY", s.key)
	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, []byte(`{"manifest_version": 1, "monitors": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"monitors", "list"}, {"export"}, {"apply", "-f", empty, "--dry-run"}} {
		var stdout, stderr bytes.Buffer
		if err := Main(context.Background(), args, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "backup") {
			t.Errorf("lookout %q: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
	}
	var stdout bytes.Buffer
	Main(context.Background(), []string{"help"}, &stdout, &stdout)
	for _, cmd := range []string{"lookout export", "lookout apply", "lookout monitors"} {
		if !strings.Contains(stdout.String(), cmd) {
			t.Errorf("usage lacks %s", cmd)
		}
	}
}
