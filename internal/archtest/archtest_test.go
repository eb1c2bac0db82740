// Package archtest checks the dependency rules of docs/architecture.md with
// `go list`, so a change that breaks the layering fails the tests.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// rule says that no package matching from may depend (directly or not) on
// a package whose import path equals or starts with one of banned.
type rule struct {
	from   string
	banned []string
	why    string
}

var rules = []rule{
	{"lookout/control/ingest", []string{"github.com/hashicorp/raft", "lookout/cluster"}, "HTTP layers see the cluster through small interfaces and cluster/clusterapi"},
	{"lookout/control/manage", []string{"github.com/hashicorp/raft", "lookout/cluster"}, "HTTP layers see the cluster through small interfaces and cluster/clusterapi"},
	{"lookout/control/admin", []string{"github.com/hashicorp/raft", "lookout/cluster"}, "HTTP layers see the cluster through small interfaces and cluster/clusterapi"},
	{"lookout/cluster/clusterapi", []string{"lookout/"}, "clusterapi is a leaf"},
}

// deps lists the packages pkg depends on, itself excluded.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var list []string
	for _, p := range strings.Fields(string(out)) {
		if p != pkg {
			list = append(list, p)
		}
	}
	return list
}

func TestLayering(t *testing.T) {
	for _, r := range rules {
		for _, d := range deps(t, r.from) {
			for _, b := range r.banned {
				// "lookout/cluster" bans that package, not cluster/clusterapi.
				if d == b || strings.HasPrefix(d, b+"/") && b != "lookout/cluster" || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b) {
					t.Errorf("%s depends on %s: %s", r.from, d, r.why)
				}
			}
		}
	}
}
