package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookout/internal/manifest"
)

const syncTab = `MAILTO=ops@example.com
# lookout: nightly-backup
30 2 * * * /usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1
CRON_TZ=America/New_York
0 9 * * MON-FRI /usr/local/bin/report.py --daily
61 * * * * /bin/broken
`

// TestSync: a dry run changes nothing and exits 2; sync creates the jobs'
// monitors (an existing one keeps its tags and grace, its interval becomes
// the schedule); a second run is all unchanged; the malformed line is
// reported; --rewrite is idempotent; --write keeps a backup and the
// wrapped crontab names the same monitors.
func TestSync(t *testing.T) {
	s := newManageServer(t)
	grace, interval := int64(60), int64(86400)
	s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "nightly-backup", Enabled: true, TimeoutSeconds: 7200,
		Tags: []string{"db"}, GraceSeconds: &grace, ExpectedIntervalSeconds: &interval})
	dir := t.TempDir()
	tab := filepath.Join(dir, "crontab")
	os.WriteFile(tab, []byte(syncTab), 0o600)
	args := []string{"--crontab", tab, "--timezone", "Europe/Berlin"}

	out, errOut, err := s.run("sync", "", append(args, "--dry-run")...)
	if ExitCode(err) != 2 || !strings.Contains(out, `+ create ping "report-py"`) || !strings.Contains(out, `~ update ping "nightly-backup"`) ||
		!strings.Contains(out, `    schedule: null -> "30 2 * * *"`) || !strings.Contains(out, `    timezone: null -> "Europe/Berlin"`) ||
		!strings.Contains(out, "Plan: 1 to create, 1 to update, 0 unchanged, 0 orphaned") {
		t.Fatalf("dry run: exit %d %v\n%s", ExitCode(err), err, out)
	}
	if !strings.Contains(errOut, "line 6: ") || !strings.Contains(errOut, "61 * * * * /bin/broken") {
		t.Fatalf("the malformed line is not reported: %q", errOut)
	}
	if ms, _ := s.client().AllMonitors(context.Background(), ""); len(ms) != 1 || ms[0].Schedule != "" {
		t.Fatalf("the dry run wrote: %+v", ms)
	}

	if out, _, err := s.run("sync", "", args...); err != nil || !strings.Contains(out, "Applied: 1 created, 1 updated") {
		t.Fatalf("sync: %v\n%s", err, out)
	}
	ms, _ := s.client().AllMonitors(context.Background(), "ping")
	got := map[string]manifest.Manifest{}
	for _, m := range ms {
		got[m.Name] = m
	}
	if b := got["nightly-backup"]; b.Schedule != "30 2 * * *" || b.Timezone != "Europe/Berlin" || b.ExpectedIntervalSeconds != nil ||
		len(b.Tags) != 1 || *b.GraceSeconds != 60 || b.TimeoutSeconds != 7200 {
		t.Fatalf("nightly-backup: %+v", b)
	}
	if r := got["report-py"]; r.Schedule != "0 9 * * MON-FRI" || r.Timezone != "America/New_York" || r.TimeoutSeconds != 3600 || *r.GraceSeconds != 300 {
		t.Fatalf("report-py: %+v", r)
	}
	if out, _, err := s.run("sync", "", append(args, "--dry-run")...); err != nil || !strings.Contains(out, "Plan: 0 to create, 0 to update, 2 unchanged") {
		t.Fatalf("second run: %v\n%s", err, out)
	}

	before := s.requests.Load()
	out, _, err = s.run("sync", "", append(args, "--rewrite", "--lookout", "/usr/local/bin/lookout")...)
	if err != nil || !strings.Contains(out, "30 2 * * * /usr/local/bin/lookout exec nightly-backup -- /bin/sh -c '/usr/local/bin/backup.sh --full > /var/log/backup.log 2>&1'\n") ||
		!strings.Contains(out, "0 9 * * MON-FRI /usr/local/bin/lookout exec report-py -- /usr/local/bin/report.py --daily\n") ||
		!strings.Contains(out, "\n61 * * * * /bin/broken\n") || s.requests.Load() != before {
		t.Fatalf("rewrite: %v\n%s", err, out)
	}
	again := filepath.Join(dir, "again")
	os.WriteFile(again, []byte(out), 0o600)
	if out2, _, err := s.run("sync", "", "--crontab", again, "--rewrite", "--lookout", "/usr/local/bin/lookout"); err != nil || out2 != out {
		t.Fatalf("rewrite twice: %v\n%s\nwant\n%s", err, out2, out)
	}

	backup := filepath.Join(dir, "backup")
	if out, _, err := s.run("sync", "", append(args, "--write", "--backup", backup, "--lookout", "/usr/local/bin/lookout", "--ingest-key", "ck_test")...); err != nil ||
		!strings.Contains(out, "Applied: 0 created, 0 updated, 2 unchanged") || !strings.Contains(out, "Installed") {
		t.Fatalf("write: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(backup); string(b) != syncTab {
		t.Fatalf("backup %q", b)
	}
	written, _ := os.ReadFile(tab)
	if !strings.HasPrefix(string(written), "LOOKOUT_ADDR="+s.url+"\nLOOKOUT_INGEST_KEY=ck_test\nMAILTO=") || !strings.Contains(string(written), "exec report-py -- ") {
		t.Fatalf("installed:\n%s", written)
	}
	if out, _, err := s.run("sync", "", append(args, "--dry-run")...); err != nil || !strings.Contains(out, "Plan: 0 to create, 0 to update, 2 unchanged") {
		t.Fatalf("after --write: %v\n%s", err, out)
	}
	if _, _, err := s.run("sync", "", append(args, "--rewrite", "--write")...); ExitCode(err) != 2 {
		t.Fatalf("--rewrite with --write: %v", err)
	}
}
