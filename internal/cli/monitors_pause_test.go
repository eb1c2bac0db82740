package cli

import (
	"strings"
	"testing"
	"time"

	"lookout/internal/manifest"
)

// TestMonitorsPauseAndResume: pause by name with --for and --reason,
// resume by uuid; a name a ping and a check share needs --kind; an unknown
// name is an error naming it.
func TestMonitorsPauseAndResume(t *testing.T) {
	s := newManageServer(t)
	backup := s.create(t, manifest.Manifest{Kind: manifest.KindPing, Name: "backup", Enabled: true, TimeoutSeconds: 600})
	s.create(t, manifest.Manifest{Kind: manifest.KindHTTP, Name: "backup", Schedule: "5m",
		Config: manifest.Config{URL: "https://example.com/", ExpectedStatus: new(200)}})

	if _, _, err := s.run("monitors", "", "pause", "backup"); ExitCode(err) != 2 || !strings.Contains(err.Error(), "add --kind") {
		t.Fatalf("an ambiguous name: %v", err)
	}
	out, _, err := s.run("monitors", "", "pause", "backup", "--kind", "ping", "--for", "2h", "--reason", "moving the database")
	if err != nil || !strings.HasPrefix(out, "Paused ping backup ("+backup+") until ") {
		t.Fatalf("pause: %v %q", err, out)
	}
	m, err := s.srv.Store.MonitorByUUID(backup)
	q := m.GetQuiet()
	wantUntil := s.srv.Now.Add(5*time.Minute + 2*time.Hour) // the command's clock, plus --for
	if err != nil || !q.GetPaused() || q.GetPauseReason() != "moving the database" || time.UnixMilli(q.GetPausedUntilUnixMs()).Sub(wantUntil).Abs() > time.Second {
		t.Fatalf("stored pause: %v %v", q, err)
	}
	if out, _, err := s.run("monitors", "", "resume", backup); err != nil || out != "Resumed ping backup ("+backup+"): new.\n" {
		t.Fatalf("resume: %v %q", err, out)
	}
	if m, _ := s.srv.Store.MonitorByUUID(backup); m.GetQuiet().GetPaused() {
		t.Fatal("still paused")
	}
	if _, _, err := s.run("monitors", "", "pause", "nope"); err == nil || !strings.Contains(err.Error(), `no monitor named "nope"`) {
		t.Fatalf("unknown name: %v", err)
	}
	if _, _, err := s.run("monitors", "", "resume"); ExitCode(err) != 2 {
		t.Fatalf("no name: %v", err)
	}
}
