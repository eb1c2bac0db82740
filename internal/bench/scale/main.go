// Command scale loads a 3-node cluster of the built binary with many
// monitors across many accounts and measures what that costs and how fast
// it still is: each node's memory and disk, a node's restart, a node
// caught up from nothing, a burst of deadlines in one second, an apply of
// changed monitors and the panel's list page of a big account.
//
//	go run ./internal/bench/scale -lookout bin/lookout -monitors 1000000 -accounts 1000 -checks 10000
//
// It is what `make bench-scale` runs. A benchmark, not a test: it prints
// figures and asserts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// config is the command line.
type config struct {
	binary                    string
	nodes                     int
	monitors, accounts        int
	checks, panelMonitors     int
	deadlines, changed        int
	parallel, conns, pageRuns int
	catchup, profileDir       string
	deadlinesOnly             bool
	nodeEnv                   string
}

func main() {
	var c config
	flag.StringVar(&c.binary, "lookout", "bin/lookout", "the lookout binary")
	flag.IntVar(&c.nodes, "nodes", 3, "control nodes (at least 2: one is restarted and emptied while the others serve)")
	flag.IntVar(&c.monitors, "monitors", 1_000_000, "monitors in all, checks included")
	flag.IntVar(&c.accounts, "accounts", 1000, "accounts the monitors are spread over")
	flag.IntVar(&c.checks, "checks", 10_000, "http_checks among the monitors, against a target the benchmark serves on loopback")
	flag.IntVar(&c.panelMonitors, "panel-monitors", 10_000, "monitors of account 0, whose panel list page is timed (the others share the rest)")
	flag.IntVar(&c.deadlines, "deadlines", 10_000, "ping monitors whose deadlines fall in the same second")
	flag.IntVar(&c.changed, "changed", 1000, "monitors of account 0 an apply changes (at most 1,000)")
	flag.IntVar(&c.parallel, "parallel", 4, "accounts loaded at once")
	flag.IntVar(&c.conns, "conns", 64, "pings in flight at once for the deadline burst")
	flag.IntVar(&c.pageRuns, "page-runs", 5, "GETs of the panel page on each node timed")
	flag.StringVar(&c.catchup, "catchup", "snapshot", "how the emptied node catches up: snapshot (the state is saved and restored through the operator API first, so that it must install a snapshot) or log (whatever raft sends: the log while it is not compacted)")
	flag.StringVar(&c.profileDir, "profile-dir", "", "write each node's heap profile after the load, and each node's CPU profile during the deadline burst (the leader's named so), into this directory")
	flag.StringVar(&c.nodeEnv, "node-env", "", "environment variables added to the nodes', comma-separated (e.g. GOMEMLIMIT=1200MiB)")
	flag.BoolVar(&c.deadlinesOnly, "deadlines-only", false, "after the load, measure the deadline burst only (to study it)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "bench scale:", err)
		os.Exit(1)
	}
}

func (c config) check() error {
	switch {
	case c.nodes < 2:
		return fmt.Errorf("-nodes must be at least 2")
	case c.accounts < 1 || c.monitors < c.accounts:
		return fmt.Errorf("-accounts must be 1 to -monitors")
	case c.changed > 1000:
		return fmt.Errorf("-changed must be at most 1000 (one apply's bound)")
	case c.catchup != "snapshot" && c.catchup != "log":
		return fmt.Errorf("-catchup must be snapshot or log")
	case c.pageRuns < 1:
		return fmt.Errorf("-page-runs must be at least 1 (the first view of a node is reported apart)")
	}
	for _, a := range split(c) {
		if a.jobs < a.due || a.jobs-a.due < min(c.changed, 1)*btoi(a.index == 0) {
			return fmt.Errorf("account %d gets %d ping monitors, fewer than its %d of the deadline burst: raise -monitors or lower -checks, -deadlines", a.index, a.jobs, a.due)
		}
	}
	return nil
}
