package probe_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"lookout/internal/manifest"
	"lookout/internal/probe"
)

// TestDefaultsMatchManifest: a zero field of a Target means what the
// manifest's canonical form fills in.
func TestDefaultsMatchManifest(t *testing.T) {
	http := manifest.Canonical(manifest.Manifest{Kind: manifest.KindHTTP})
	if got := (probe.Target{}).EffectiveTimeout(); got != time.Duration(http.Config.Timeout)*time.Second {
		t.Fatalf("timeout %v, manifest %ds", got, http.Config.Timeout)
	}
	if probe.DefaultMethod != http.Config.Method {
		t.Fatalf("method %q, manifest %q", probe.DefaultMethod, http.Config.Method)
	}
	for _, c := range []manifest.Config{{}, {WarningDays: 5}, {WarningDays: 60}, {AlertDays: 3}, {WarningDays: 20, AlertDays: 10}} {
		ssl := manifest.Canonical(manifest.Manifest{Kind: manifest.KindSSL, Config: c}).Config
		w, a := probe.Target{WarningDays: c.WarningDays, AlertDays: c.AlertDays}.Thresholds()
		if w != ssl.WarningDays || a != ssl.AlertDays {
			t.Fatalf("%+v: thresholds %d/%d, manifest %d/%d", c, w, a, ssl.WarningDays, ssl.AlertDays)
		}
	}
}

// TestNoServerDependencies: the probes are for the edge agent too, which
// must not pull in the control plane, the cluster, raft or Badger.
func TestNoServerDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "lookout/internal/probe/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"lookout/control", "lookout/cluster", "lookout/internal/gen",
		"github.com/hashicorp/raft", "github.com/dgraph-io/badger",
	}
	for dep := range strings.FieldsSeq(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("a probe package depends on %s", dep)
			}
		}
	}
	for _, p := range []string{"lookout/internal/probe/httpprobe", "lookout/internal/probe/tlsprobe"} {
		if !strings.Contains(string(out), p+"\n") {
			t.Fatalf("go list did not list %s:\n%s", p, out)
		}
	}
}
