package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lookout/control/controltest"
	"lookout/internal/client"
	"lookout/internal/manifest"
)

// TestExportApplyRoundTrip exports an account with every kind and most
// fields, as YAML and as JSON, and applies each back: all unchanged, and
// nothing written.
func TestExportApplyRoundTrip(t *testing.T) {
	s := newManageServer(t)
	ctx := context.Background()
	adm := client.NewAdmin(s.srv.URL, controltest.Token, nil)
	acct, err := s.client().Account(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateNotificationGroup(ctx, acct.ID, client.CreateNotificationGroupRequest{Name: "oncall"}); err != nil {
		t.Fatal(err)
	}
	s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "backup", Enabled: true, TimeoutSeconds: 600, Tags: []string{"db", "nightly"},
		ExpectedIntervalSeconds: new(int64(86400)), GraceSeconds: new(int64(300)), DisplayName: "Nightly backup", Project: new("ops"), NotificationGroup: "oncall"})
	s.create(t, manifest.Manifest{Kind: manifest.KindHTTP, Name: "site: home", Schedule: "*/5 * * * *",
		Config: manifest.Config{URL: "https://example.com/", Method: "HEAD", ExpectedContent: "ok"}})
	s.create(t, manifest.Manifest{Kind: manifest.KindSSL, Name: "cert", Enabled: true, Schedule: "1d", Config: manifest.Config{Domain: "example.com", WarningDays: 20}})
	unchanged := "= 3 unchanged\n\nPlan: 0 to create, 0 to update, 3 unchanged, 0 orphaned (apply never deletes).\n"

	// To stdout: YAML.
	yamlOut, _, err := s.run("export", "")
	if err != nil || !strings.HasPrefix(yamlOut, "manifest_version: 1\nmonitors:\n  - manifest_version: 1\n    kind: ping\n") || strings.Contains(yamlOut, "uuid") {
		t.Fatalf("export: %v\n%s", err, yamlOut)
	}
	// To a .yaml file: the same; applied back, all unchanged.
	dir := t.TempDir()
	yamlFile := filepath.Join(dir, "monitors.yaml")
	_, stderr, err := s.run("export", "", "-o", yamlFile)
	if data, _ := os.ReadFile(yamlFile); err != nil || string(data) != yamlOut || stderr != "Exported 3 monitor(s) to "+yamlFile+".\n" {
		t.Fatalf("export -o: %v %q\n%s", err, stderr, data)
	}
	if out, _, err := s.run("apply", "", "-f", yamlFile, "--dry-run"); err != nil || out != unchanged {
		t.Fatalf("YAML applied back: %v\n%s", err, out)
	}

	// JSON: by extension, or --format (which wins over the extension).
	jsonFile, forced := filepath.Join(dir, "monitors.json"), filepath.Join(dir, "forced.yml")
	for _, args := range [][]string{{"-o", jsonFile}, {"-o", forced, "--format", "json"}} {
		if _, _, err := s.run("export", "", args...); err != nil {
			t.Fatal(err)
		}
	}
	jsonOut, _, err := s.run("export", "", "--format", "json")
	var b manifest.Bundle
	if err != nil || json.Unmarshal([]byte(jsonOut), &b) != nil || len(b.Monitors) != 3 || b.Monitors[0].Project == nil || *b.Monitors[0].Project != "ops" {
		t.Fatalf("export --format json: %v\n%s", err, jsonOut)
	}
	for _, f := range []string{jsonFile, forced} {
		if data, _ := os.ReadFile(f); string(data) != jsonOut {
			t.Fatalf("%s:\n%s\nwant\n%s", f, data, jsonOut)
		}
	}
	before := s.srv.Store.AppliedIndex()
	if out, _, err := s.run("apply", "", "-f", jsonFile); err != nil || out != strings.Replace(strings.Replace(unchanged, "Plan", "Applied", 1), "0 to create, 0 to update", "0 created, 0 updated", 1) {
		t.Fatalf("JSON applied back: %v\n%s", err, out)
	}
	// forced.yml holds JSON, which YAML reads too.
	if out, _, err := s.run("apply", "", "-f", forced, "--dry-run"); err != nil || out != unchanged {
		t.Fatalf("JSON read as YAML: %v\n%s", err, out)
	}
	if s.srv.Store.AppliedIndex() != before {
		t.Fatal("an unchanged apply wrote")
	}
}
