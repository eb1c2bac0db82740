package probe_test

import (
	"os/exec"
	"strings"
	"testing"
)

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
