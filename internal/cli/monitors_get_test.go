package cli

import (
	"regexp"
	"strings"
	"testing"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
)

// ping records events of the account's ping monitor name, the first at
// the server's time, each a second after the one before.
func (s *manageServer) ping(t *testing.T, name string, events ...*raftv1.Event) {
	t.Helper()
	for i, e := range events {
		e.AccountId, e.Monitor, e.EventType = s.account, name, "ping"
		e.ReceivedUnixMs = s.srv.Now.UnixMilli() + int64(i)*1000
	}
	s.srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: events}}})
}

// monitors get, events, executions and delete take a name as well as a
// uuid; get prints the status.
func TestMonitorsByName(t *testing.T) {
	s := newManageServer(t)
	backup := s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "backup", Enabled: true, TimeoutSeconds: 600,
		ExpectedIntervalSeconds: new(int64(3600))})
	site := s.create(t, manifest.Manifest{Kind: manifest.KindHTTP, Name: "site", Enabled: true, Schedule: "5m",
		Config: manifest.Config{URL: "https://example.com/", ExpectedStatus: new(200)}})
	s.ping(t, "backup", &raftv1.Event{Status: "run"}, &raftv1.Event{Status: "complete", Host: "db-1", Message: "dumped 3 tables\nand more"})

	out, _, err := s.run("monitors", "", "get", "backup")
	want := "ping backup (" + backup + ")\n" +
		"  state:           up\n" +
		"  last ping:       2026-03-15T12:30:01Z (5m ago)\n" +
		"  next expected:   2026-03-15T13:30:01Z (in 55m)\n" +
		"  next deadline:   2026-03-15T13:30:01Z (in 55m)\n" +
		"  last duration:   1s\n\n"
	if err != nil || !strings.HasPrefix(out, want) || !strings.Contains(out, `"timeout_seconds": 600`) {
		t.Fatalf("get backup: %v\n%s\nwant it to start with\n%s", err, out, want)
	}

	// The state is in the list too.
	if out, _, err := s.run("monitors", "", "list", "--kind", "ping"); err != nil || !strings.Contains(out, "backup  up ") {
		t.Errorf("list: %v\n%s", err, out)
	}

	out, _, err = s.run("monitors", "", "events", "backup", "--limit", "5")
	want = "TIME                  EVENT     DURATION  EXIT  HOST  MESSAGE\n" +
		"2026-03-15T12:30:01Z  complete  1s        -     db-1  dumped 3 tables…\n" +
		"2026-03-15T12:30:00Z  run       -         -     -     -\n"
	if err != nil || out != want {
		t.Errorf("events: %v\n%s\nwant\n%s", err, out, want)
	}
	if out, _, err := s.run("monitors", "", "events", backup, "--limit", "1", "--json"); err != nil || strings.Count(out, `"event_type"`) != 1 {
		t.Errorf("events --json: %v\n%s", err, out)
	}
	// Older pages: the first names the cursor of the next, which reads on.
	out, stderr, err := s.run("monitors", "", "events", "backup", "--limit", "1")
	cursor := regexp.MustCompile(`--before (\S+)`).FindStringSubmatch(stderr)
	if err != nil || strings.Count(out, "\n") != 2 || !strings.Contains(out, "complete") || cursor == nil {
		t.Fatalf("events --limit 1: %v\n%s\n%s", err, out, stderr)
	}
	out, stderr, err = s.run("monitors", "", "events", "backup", "--limit", "1", "--before", cursor[1])
	if err != nil || !strings.Contains(out, "  run ") || strings.Contains(out, "complete") || stderr != "" {
		t.Errorf("events --before: %v\n%s\n%s", err, out, stderr)
	}

	// A check: its status, and its executions.
	slot := s.srv.Now.UnixMilli()
	s.srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: []*raftv1.Execution{{
		AccountId: s.account, CheckUuid: site, Region: state.RegionControl, SlotUnixMs: slot, StartedUnixMs: slot, FinishedUnixMs: slot + 40,
		Status: state.ExecFailed, Attempts: 4, DurationMs: 40, Error: "the answer's status is 500, want 200",
		Http: &raftv1.ExecutionHTTP{StatusCode: 500, ResponseBytes: 3}}}}}})
	out, _, err = s.run("monitors", "", "get", "site")
	if err != nil || !strings.HasPrefix(out, "http_check site ("+site+")\n  state:           down\n  last execution:  2026-03-15T12:30:00Z (5m ago)\n  last status:     failed\n  next run:        ") {
		t.Errorf("get site: %v\n%s", err, out)
	}
	out, _, err = s.run("monitors", "", "executions", "site")
	want = "SLOT                  STATUS  REGION   ATTEMPTS  DURATION  RESULT\n" +
		"2026-03-15T12:30:00Z  failed  control  4         40ms      the answer's status is 500, want 200\n"
	if err != nil || out != want {
		t.Errorf("executions: %v\n%s\nwant\n%s", err, out, want)
	}
	if _, _, err := s.run("monitors", "", "executions", "backup"); ExitCode(err) != 2 || !strings.Contains(err.Error(), "lookout monitors events backup") {
		t.Errorf("executions of a ping monitor: %v", err)
	}

	// A name a ping monitor and a check share needs --kind.
	shared := s.create(t, manifest.Manifest{Kind: manifest.KindSSL, Name: "backup", Enabled: true, Schedule: "1h",
		Config: manifest.Config{Domain: "example.com", WarningDays: 30, AlertDays: 7}})
	before := s.requests.Load()
	_, _, err = s.run("monitors", "", "get", "backup")
	if ExitCode(err) != 2 || !strings.Contains(err.Error(), `"backup" names 2 monitors: ping (`+backup+`) and ssl_check (`+shared+`); add --kind ping`) {
		t.Errorf("ambiguous name: %v", err)
	}
	if s.requests.Load()-before != 1 {
		t.Errorf("%d requests for an ambiguous name, want the one list", s.requests.Load()-before)
	}
	if out, _, err := s.run("monitors", "", "get", "backup", "--kind", "ssl_check"); err != nil || !strings.HasPrefix(out, "ssl_check backup ("+shared+")") {
		t.Errorf("--kind ssl_check: %v\n%s", err, out)
	}
	if _, _, err := s.run("monitors", "", "get", "nightly"); ExitCode(err) != 1 || !strings.Contains(err.Error(), `no monitor named "nightly"`) {
		t.Errorf("unknown name: %v", err)
	}
	if _, _, err := s.run("monitors", "", "get", "backup", "--kind", "cron"); ExitCode(err) != 2 {
		t.Errorf("--kind cron: %v", err)
	}

	// delete by name.
	if out, _, err := s.run("monitors", "", "delete", "site", "--confirm"); err != nil || out != "Deleted monitor site.\n" {
		t.Fatalf("delete site: %v %q", err, out)
	}
	if _, _, err := s.run("monitors", "", "get", site); ExitCode(err) != 1 {
		t.Errorf("get after delete: %v", err)
	}
}

func TestDurationText(t *testing.T) {
	for _, tc := range []struct {
		seconds float64
		want    string
	}{
		{0, "0s"},
		{0.000412, "412µs"},
		{0.008605446, "9ms"},
		{1, "1s"},
		{1.2468, "1.25s"},
		{59.994, "59.99s"},
		{3725.2, "1h2m5s"},
	} {
		if got := durationText(tc.seconds); got != tc.want {
			t.Errorf("durationText(%v) = %q, want %q", tc.seconds, got, tc.want)
		}
	}
}
