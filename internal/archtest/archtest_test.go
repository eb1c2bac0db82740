// Package archtest checks the dependency rules of docs/architecture.md with
// `go list`, so a change that breaks the layering fails the tests.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// rule says that package from may not depend (directly or not) on any
// package of banned: an import path, or a path ending in "/..." for a
// tree.
type rule struct {
	from   string
	banned []string
	why    string
}

var rules = []rule{
	{"lookout/control/ingest", []string{"github.com/hashicorp/raft", "lookout/cluster"}, "HTTP layers see the cluster through small interfaces and cluster/clusterapi"},
	{"lookout/control/manage", []string{"github.com/hashicorp/raft", "lookout/cluster"}, "HTTP layers see the cluster through small interfaces and cluster/clusterapi"},
	{"lookout/control/manage", []string{"lookout/control/admin"}, "the Management API does not depend on the operator API; what both show is in internal/plans"},
	{"lookout/control/admin", []string{"github.com/hashicorp/raft", "lookout/cluster"}, "HTTP layers see the cluster through small interfaces and cluster/clusterapi"},
	{"lookout/control/agentrpc", []string{"github.com/hashicorp/raft", "lookout/cluster", "lookout/control/ingest", "lookout/control/admin", "lookout/control/manage"}, "the agent RPC sees the cluster and the Ingest API through small interfaces"},
	{"lookout/cluster/clusterapi", []string{"lookout/cluster", "lookout/control/...", "github.com/hashicorp/raft"}, "clusterapi is a leaf"},
	{"lookout/cluster", []string{"lookout/control/..."}, "the node drives the state through its StateMachine interface"},
	{"lookout/agent/...", []string{"lookout/control/...", "lookout/cluster", "lookout/cluster/...", "github.com/hashicorp/raft"}, "the edge agent never imports the control plane; it speaks to it over proto/lookout/agent/v1 only"},
	{"lookout/control/public", []string{"github.com/hashicorp/raft", "lookout/cluster", "lookout/control/admin", "lookout/control/manage", "lookout/control/panel", "lookout/control/ingest", "lookout/control/agentrpc", "lookout/control/keyauth", "lookout/control/engine", "lookout/control/checks", "lookout/control/alert", "lookout/control/presence"}, "what anyone may read imports control/state only: it cannot write, and sees nothing of the APIs"},
	{"lookout/internal/netguard", []string{"lookout/..."}, "the address rule is a leaf: the probes, the channels and the CLI all use it"},
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
				if d == b || strings.HasSuffix(b, "/...") && strings.HasPrefix(d, strings.TrimSuffix(b, "...")) {
					t.Errorf("%s depends on %s: %s", r.from, d, r.why)
				}
			}
		}
	}
}
