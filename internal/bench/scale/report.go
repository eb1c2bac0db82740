package main

import (
	"fmt"
	"strings"
	"time"

	"lookout/internal/bench"
)

// report prints the figures against the targets, one row each.
func report(c config, f figures) {
	fmt.Println(strings.Repeat("=", 96))
	fmt.Printf("%d monitors (%d http_checks), %d accounts, %d nodes; %s\n", c.monitors, c.checks, c.accounts, c.nodes, bench.Machine())
	row := func(name, value, target string) { fmt.Printf("%-52s %-26s %s\n", name, value, target) }
	row("figure", "measured", "target")
	for i := range c.nodes {
		l, e := f.loaded[i], f.afterAll[i]
		// The peak of the node's processes: a restarted node's began anew.
		row(fmt.Sprintf("node %d RSS after the load / at the end / peak", i+1),
			fmt.Sprintf("%s / %s / %s", bench.MiB(l.mem.RSS), bench.MiB(e.mem.RSS), bench.MiB(max(l.mem.Peak, e.mem.Peak))), "< 1536 MiB")
		row(fmt.Sprintf("node %d disk after the load / at the end", i+1), fmt.Sprintf("%s / %s", bench.MiB(l.disk), bench.MiB(e.disk)), "")
	}
	row("load (applies of at most 1,000, "+fmt.Sprint(c.parallel)+" accounts at once)", f.loadTime.Round(time.Second).String(), "")
	row("restart of a follower to healthy", f.restart.Round(time.Millisecond).String(), "< 30 s")
	how := map[bool]string{true: "snapshot", false: "log replay"}[f.catchUp.bySnapshot]
	row("empty node caught up to healthy ("+how+")", f.catchUp.healthy.Round(time.Millisecond).String(), "< 120 s")
	row(fmt.Sprintf("alert lag, %d deadlines in %d s: p50 / p99 / max", f.lag.alerts, f.lag.deadlines),
		f.lag.lags.Summary(), "p99 < 1 s")
	row(fmt.Sprintf("apply, %d of account 0's monitors changed", c.changed), f.update.Round(time.Millisecond).String(), "")
	for _, r := range []string{"leader", "follower"} {
		first, ts := f.pageFirst[r], f.page[r]
		if len(first) == 0 {
			continue
		}
		row(fmt.Sprintf("panel list page (%d monitors), %s, a node's first view: max", min(c.panelMonitors, c.monitors), r),
			first.Percentile(1).Round(100*time.Microsecond).String(), "")
		if len(ts) > 0 {
			row(fmt.Sprintf("panel list page (%d monitors), %s, later views: median / max", min(c.panelMonitors, c.monitors), r),
				fmt.Sprintf("%s / %s", ts.Percentile(0.5).Round(100*time.Microsecond), ts.Percentile(1).Round(100*time.Microsecond)), "< 100 ms")
		}
	}
}
