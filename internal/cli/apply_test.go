package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookout/internal/client"
	"lookout/internal/manifest"
)

const bundleYAML = `manifest_version: 1
monitors:
  - kind: ping
    name: backup
    timeout_seconds: 600
    tags: [db, nightly]
  - kind: http_check
    name: site
    schedule: 5m
    config:
      url: https://example.com/
      expected_status: 200
`

// bundleJSON is bundleYAML with the site's URL changed.
const bundleJSON = `{"manifest_version": 1, "monitors": [
  {"kind": "ping", "name": "backup", "timeout_seconds": 600, "tags": ["db", "nightly"]},
  {"kind": "http_check", "name": "site", "schedule": "5m", "config": {"url": "https://example.org/", "expected_status": 200}}
]}`

// writeFile writes data to name in a temporary directory and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestApplyPlanAndExitCodes(t *testing.T) {
	s := newManageServer(t)
	old := s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "old", Enabled: true, TimeoutSeconds: 60})
	yamlFile, jsonFile := writeFile(t, "monitors.yaml", bundleYAML), writeFile(t, "monitors.json", bundleJSON)
	orphan := `? orphaned ping "old" (` + old + ")\n"

	// A dry run with changes: the plan, exit 2, nothing written.
	out, _, err := s.run("apply", "", "-f", yamlFile, "--dry-run")
	want := "+ create ping \"backup\"\n+ create http_check \"site\"\n" + orphan +
		"\nPlan: 2 to create, 0 to update, 0 unchanged, 1 orphaned (apply never deletes).\n"
	if ExitCode(err) != 2 || out != want {
		t.Fatalf("dry run: %v (exit %d)\n%s\nwant\n%s", err, ExitCode(err), out, want)
	}
	if ms, _ := s.client().AllMonitors(context.Background(), ""); len(ms) != 1 {
		t.Fatalf("the dry run wrote: %d monitors", len(ms))
	}

	// The apply creates both, exit 0.
	out, _, err = s.run("apply", "", "-f", yamlFile)
	if err != nil || !strings.HasPrefix(out, "+ create ping \"backup\" (") ||
		!strings.HasSuffix(out, orphan+"\nApplied: 2 created, 0 updated, 0 unchanged, 1 orphaned (apply never deletes).\n") {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	ms, err := s.client().AllMonitors(context.Background(), manifest.KindHTTP)
	if err != nil || len(ms) != 1 {
		t.Fatalf("after apply: %v %v", ms, err)
	}
	site := ms[0].UUID

	// A dry run without changes: exit 0; from stdin, YAML by default.
	out, _, err = s.run("apply", bundleYAML, "-f", "-", "--dry-run")
	want = "= 2 unchanged\n" + orphan + "\nPlan: 0 to create, 0 to update, 2 unchanged, 1 orphaned (apply never deletes).\n"
	if err != nil || out != want {
		t.Fatalf("unchanged dry run: %v\n%s\nwant\n%s", err, out, want)
	}

	// An update shows each field; JSON by extension, or from stdin with --format.
	want = "~ update http_check \"site\" (" + site + ")\n" +
		"    config.url: \"https://example.com/\" -> \"https://example.org/\"\n" +
		"= 1 unchanged\n" + orphan + "\nPlan: 0 to create, 1 to update, 1 unchanged, 1 orphaned (apply never deletes).\n"
	for _, args := range [][]string{{"-f", jsonFile, "--dry-run"}, {"--dry-run", "-f", "-", "--format", "json"}} {
		out, _, err = s.run("apply", bundleJSON, args...)
		if ExitCode(err) != 2 || out != want {
			t.Fatalf("update dry run %q: %v (exit %d)\n%s\nwant\n%s", args, err, ExitCode(err), out, want)
		}
	}
	out, _, err = s.run("apply", "", "-f", jsonFile)
	if err != nil || !strings.HasSuffix(out, "Applied: 0 created, 1 updated, 1 unchanged, 1 orphaned (apply never deletes).\n") {
		t.Fatalf("update: %v\n%s", err, out)
	}
	if m, err := s.client().GetMonitor(context.Background(), site); err != nil || m.Config.URL != "https://example.org/" {
		t.Fatalf("after update: %+v %v", m, err)
	}
}

func TestApplyInvalid(t *testing.T) {
	s := newManageServer(t)
	// Every problem, per key; exit 1; nothing written.
	bad := writeFile(t, "bad.yaml", `manifest_version: 1
monitors:
  - {kind: ping, name: fine, timeout_seconds: 60}
  - {kind: ping, name: slow, timeout_seconds: 0}
  - {kind: ping, name: "bad name", timeout_seconds: 60, grace_seconds: -1}
`)
	before := s.srv.Store.AppliedIndex()
	_, stderr, err := s.run("apply", "", "-f", bad)
	var ve *client.ValidationError
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if ExitCode(err) != 1 || !errors.As(err, &ve) || !strings.Contains(err.Error(), "nothing was written") || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "monitors.1: timeout_out_of_range: ") ||
		!strings.HasPrefix(lines[1], "monitors.2: name_charset_invalid: ") ||
		!strings.HasPrefix(lines[2], "monitors.2: grace_out_of_range: ") {
		t.Fatalf("invalid bundle: %v (exit %d)\n%s", err, ExitCode(err), stderr)
	}
	if s.srv.Store.AppliedIndex() != before {
		t.Fatal("an invalid bundle wrote")
	}
	// Invalid JSON is the service's to say; a YAML syntax error is ours.
	_, stderr, err = s.run("apply", "", "-f", writeFile(t, "b.json", `{"manifest_version": 1,`))
	if ExitCode(err) != 1 || !strings.HasPrefix(stderr, "bundle: invalid_json: ") {
		t.Fatalf("invalid JSON: %v\n%s", err, stderr)
	}
	requests := s.requests.Load()
	_, _, err = s.run("apply", "", "-f", writeFile(t, "b.yml", "monitors: [\n"))
	if ExitCode(err) != 1 || !strings.Contains(err.Error(), "yaml:") || s.requests.Load() != requests {
		t.Fatalf("YAML syntax error: %v", err)
	}
	if _, _, err := s.run("apply", "", "-f", filepath.Join(t.TempDir(), "missing.yaml")); ExitCode(err) != 1 || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
