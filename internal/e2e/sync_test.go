package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSyncOnADevNode runs lookout sync against a dev node, reading and
// installing the crontab through a stand-in crontab command on PATH: a dry
// run changes nothing (exit 2), sync creates the monitors, a second run is
// all unchanged, the malformed line is reported, --rewrite is idempotent,
// --write installs the wrapped crontab with a backup, and a wrapped job,
// run as cron would, reports to its monitor.
func TestSyncOnADevNode(t *testing.T) {
	t.Parallel()
	dev := start(t, "dev", "control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0",
		"--raft-addr", "127.0.0.1:0", "--log-level", "warn")
	out := dev.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `is up at (http://[0-9.:]+)`)
	mk := match(t, out, `management key:\s+(mk_\S+)`)

	dir := t.TempDir()
	bin, home := filepath.Join(dir, "bin"), filepath.Join(dir, "home")
	os.Mkdir(bin, 0o755)
	os.Mkdir(home, 0o755)
	tabFile := filepath.Join(dir, "crontab")
	os.WriteFile(filepath.Join(bin, "crontab"), []byte(`#!/bin/sh
case "$1" in
-l) if [ -f "$CRONTAB_FILE" ]; then cat "$CRONTAB_FILE"; else echo "no crontab for $USER" >&2; exit 1; fi ;;
-) cat > "$CRONTAB_FILE" ;;
*) exit 64 ;;
esac
`), 0o755)
	os.WriteFile(tabFile, []byte(`SHELL=/bin/sh
# lookout: greeting
*/5 * * * * echo hello from cron
CRON_TZ=Asia/Tokyo
15 3 * * * true && echo done > /dev/null
99 * * * * /bin/never
`), 0o600)
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+home, "CRONTAB_FILE="+tabFile,
		"LOOKOUT_ADDR="+base, "LOOKOUT_MANAGEMENT_KEY="+mk, "LOOKOUT_INGEST_KEY="+match(t, out, `ingest key:\s+(ck_\S+)`))
	sync := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"sync", "--timezone", "Europe/Berlin"}, args...)...)
		cmd.Env = env
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
	}
	monitors := func() map[string]map[string]any {
		t.Helper()
		code, body := get(t, base+"/api/v1/monitors?kind=ping", "Bearer "+mk)
		var list struct{ Monitors []map[string]any }
		if code != 200 || json.Unmarshal([]byte(body), &list) != nil {
			t.Fatalf("list: %d %s", code, body)
		}
		out := map[string]map[string]any{}
		for _, m := range list.Monitors {
			out[m["name"].(string)] = m
		}
		return out
	}
	before := len(monitors())

	stdout, stderr, code := sync("--dry-run")
	if code != 2 || !strings.Contains(stdout, `+ create ping "greeting"`) || !strings.Contains(stdout, `+ create ping "true"`) || len(monitors()) != before {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "line 6: ") || !strings.Contains(stderr, "99 * * * * /bin/never") {
		t.Fatalf("the malformed line is not reported: %s", stderr)
	}
	if stdout, stderr, code = sync(); code != 0 || !strings.Contains(stdout, "Applied: 2 created") {
		t.Fatalf("sync: exit %d\n%s\n%s", code, stdout, stderr)
	}
	ms := monitors()
	if g := ms["greeting"]; g["schedule"] != "*/5 * * * *" || g["timezone"] != "Europe/Berlin" {
		t.Fatalf("greeting: %v", g)
	}
	if g := ms["true"]; g["schedule"] != "15 3 * * *" || g["timezone"] != "Asia/Tokyo" {
		t.Fatalf("true: %v", g)
	}
	if stdout, _, code = sync("--dry-run"); code != 0 || !strings.Contains(stdout, "Plan: 0 to create, 0 to update, 2 unchanged") {
		t.Fatalf("second run: exit %d\n%s", code, stdout)
	}

	rewritten, _, code := sync("--rewrite")
	if code != 0 || !strings.Contains(rewritten, "*/5 * * * * "+binary+" exec greeting -- echo hello from cron\n") ||
		!strings.Contains(rewritten, "15 3 * * * "+binary+" exec true -- /bin/sh -c 'true && echo done > /dev/null'\n") ||
		!strings.Contains(rewritten, "\n99 * * * * /bin/never\n") {
		t.Fatalf("rewrite: exit %d\n%s", code, rewritten)
	}
	if stdout, stderr, code = sync("--write"); code != 0 || !strings.Contains(stdout, "Installed") {
		t.Fatalf("write: exit %d\n%s\n%s", code, stdout, stderr)
	}
	installed, _ := os.ReadFile(tabFile)
	if !strings.Contains(string(installed), "LOOKOUT_INGEST_KEY=ck_") || !strings.HasSuffix(string(installed), rewritten[strings.Index(rewritten, "SHELL="):]) {
		t.Fatalf("installed:\n%s", installed)
	}
	if backups, _ := filepath.Glob(filepath.Join(home, "crontab.lookout-backup-*")); len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	if again, _, _ := sync("--rewrite"); again != string(installed) {
		t.Fatalf("rewriting the installed crontab changed it:\n%s\nwant\n%s", again, installed)
	}
	if stdout, _, code = sync("--dry-run"); code != 0 || !strings.Contains(stdout, "2 unchanged") {
		t.Fatalf("after --write: exit %d\n%s", code, stdout)
	}

	// Cron runs a wrapped line with the crontab's variables: it reports.
	var line string
	for _, l := range strings.Split(string(installed), "\n") {
		if strings.Contains(l, "exec greeting") {
			line = l
		}
	}
	job := exec.Command("/bin/sh", "-c", strings.SplitN(line, " ", 6)[5])
	job.Env = append(os.Environ(), "LOOKOUT_ADDR="+base, "LOOKOUT_INGEST_KEY="+match(t, out, `ingest key:\s+(ck_\S+)`))
	if b, err := job.CombinedOutput(); err != nil || string(b) != "hello from cron\n" {
		t.Fatalf("the wrapped job: %v %q", err, b)
	}
	code, body := get(t, base+"/api/v1/monitors/"+monitors()["greeting"]["uuid"].(string), "Bearer "+mk)
	if code != 200 || !strings.Contains(body, `"state":"up"`) {
		t.Fatalf("greeting after its run: %d %s", code, body)
	}
}
