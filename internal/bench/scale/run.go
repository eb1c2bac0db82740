package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"lookout/internal/bench"
)

// figures are everything run measured, for the report.
type figures struct {
	loadTime         time.Duration
	loaded, afterAll []nodeFigures
	// The panel page's timings by the node's role: the first view of each
	// node (it reads the account), and the later ones.
	pageFirst, page   map[string]bench.Latencies
	pageBytes         int
	applySame, update time.Duration
	lag               lagFigures
	stop, restart     time.Duration
	catchUp           catchUp
}

// run starts the cluster, loads it and takes each measure in turn.
func run(ctx context.Context, c config) (err error) {
	if err := c.check(); err != nil {
		return err
	}
	recv, err := startReceiver()
	if err != nil {
		return err
	}
	defer recv.close()
	fmt.Printf("machine: %s\n", bench.Machine())
	fmt.Printf("lookout: %d nodes; %d monitors (%d http_checks) in %d accounts, account 0 with %d; %d deadlines in one second\n",
		c.nodes, c.monitors, c.checks, c.accounts, min(c.panelMonitors, c.monitors), c.deadlines)
	var env []string
	if c.nodeEnv != "" {
		env = strings.Split(c.nodeEnv, ",")
		fmt.Printf("node environment: %s\n", strings.Join(env, " "))
	}
	if c.profileDir != "" {
		if err := os.MkdirAll(c.profileDir, 0o755); err != nil {
			return err
		}
	}
	cl, err := bench.StartClusterWith(ctx, bench.ClusterOptions{Binary: c.binary, Nodes: c.nodes, Env: env})
	if err != nil {
		return err
	}
	defer func() {
		// A run that failed keeps the nodes' logs beside the profiles.
		if err != nil && c.profileDir != "" {
			if cerr := cl.CopyLogs(c.profileDir); cerr != nil {
				fmt.Fprintln(os.Stderr, "keeping the nodes' logs:", cerr)
			}
		}
		cl.Stop()
	}()
	// role names node i's role as the nodes last said (leader, when the
	// leader moves, is read again before the figures at the end).
	leader, _ := cl.Leader(ctx)
	role := func(i int) string { return map[bool]string{true: "leader", false: "follower"}[i == leader] }
	var f figures

	// The accounts, their webhook channel, then every monitor.
	accts := split(c)
	if err := setUp(ctx, cl, accts, recv, c.parallel); err != nil {
		return err
	}
	printNodes("before the load", role, measureNodes(cl, c.nodes))
	if f.loadTime, err = load(ctx, accts, recv.url, c.parallel); err != nil {
		return err
	}
	if err := waitReplicated(ctx, cl, c.nodes); err != nil {
		return err
	}
	fmt.Printf("load: %d monitors in %s (%.0f/s), replicated to every node\n", c.monitors, f.loadTime.Round(time.Second),
		float64(c.monitors)/f.loadTime.Seconds())
	f.loaded = measureNodes(cl, c.nodes)
	printNodes("after the load", role, f.loaded)
	if c.profileDir != "" {
		for i := range c.nodes {
			if err := cl.HeapProfile(ctx, i, filepath.Join(c.profileDir, fmt.Sprintf("heap-node%d.pprof", i+1))); err != nil {
				return err
			}
		}
	}

	if c.deadlinesOnly {
		return measureDeadlines(ctx, c, cl, accts, recv, &f)
	}

	// The panel's list page of account 0, on every node.
	f.pageFirst, f.page = map[string]bench.Latencies{}, map[string]bench.Latencies{}
	for i := range c.nodes {
		ts, size, err := panelPage(ctx, "http://"+cl.URLs[i], accts[0].Email, panelPassword, c.pageRuns)
		if err != nil {
			return fmt.Errorf("panel page on node %d: %w", i+1, err)
		}
		f.pageFirst[role(i)] = append(f.pageFirst[role(i)], ts[0])
		f.page[role(i)], f.pageBytes = append(f.page[role(i)], ts[1:]...), size
		fmt.Printf("panel list page on node %d (%s): %v (%d bytes)\n", i+1, role(i), rounded(ts), size)
	}

	// An apply of account 0's bundle, unchanged and with some changed.
	if f.applySame, f.update, err = applyChanged(ctx, &accts[0], recv.url, c.changed); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	fmt.Printf("apply of account 0's %d monitors: unchanged %s, %d changed %s\n", accts[0].jobs+accts[0].checks,
		f.applySame.Round(time.Millisecond), c.changed, f.update.Round(time.Millisecond))

	if err := measureDeadlines(ctx, c, cl, accts, recv, &f); err != nil {
		return err
	}

	// A follower restarted, then one caught up from an empty directory.
	fol, err := follower(ctx, cl, c.nodes)
	if err != nil {
		return err
	}
	if f.stop, f.restart, err = restartNode(ctx, cl, fol); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	fmt.Printf("restart of node %d (a follower): stopped in %s, healthy %s after its start\n", fol+1,
		f.stop.Round(time.Millisecond), f.restart.Round(time.Millisecond))
	if f.catchUp, err = catchUpNode(ctx, cl, fol, c.nodes, c.catchup == "snapshot"); err != nil {
		return fmt.Errorf("catch up: %w", err)
	}
	how := map[bool]string{true: "installed a snapshot", false: "replayed the log"}[f.catchUp.bySnapshot]
	if c.catchup == "snapshot" {
		fmt.Printf("operator snapshot: %s saved in %s, restored into the cluster in %s\n", bench.MiB(f.catchUp.snapshotBytes),
			f.catchUp.saved.Round(time.Millisecond), f.catchUp.restored.Round(time.Millisecond))
	}
	fmt.Printf("node %d on an empty data directory: healthy %s after its start (%s)\n", fol+1, f.catchUp.healthy.Round(time.Millisecond), how)
	if err := waitReplicated(ctx, cl, c.nodes); err != nil {
		return err
	}
	leader, _ = cl.Leader(ctx)
	f.afterAll = measureNodes(cl, c.nodes)
	printNodes("at the end", role, f.afterAll)
	report(c, f)
	return nil
}

// rounded is ds to the 0.1 ms, for printing.
func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(100 * time.Microsecond)
	}
	return out
}

// measureDeadlines runs the deadline burst, with each node's CPU profile
// beside it (the leader's named so).
func measureDeadlines(ctx context.Context, c config, cl *bench.Cluster, accts []account, recv *receiver, f *figures) error {
	profiled := make(chan error, 1)
	if leader, err := cl.Leader(ctx); c.profileDir != "" && err == nil {
		go func() {
			// The burst's deadlines fall at the start of the minute after
			// the next one.
			bench.Sleep(ctx, time.Until(time.Now().Truncate(time.Minute).Add(2*time.Minute)))
			var g errgroup.Group
			for i := range c.nodes {
				name := fmt.Sprintf("cpu-node%d-deadlines.pprof", i+1)
				if i == leader {
					name = "cpu-leader-deadlines.pprof"
				}
				g.Go(func() error { return cl.CPUProfile(ctx, i, 20*time.Second, filepath.Join(c.profileDir, name)) })
			}
			profiled <- g.Wait()
		}()
	} else {
		profiled <- nil
	}
	var err error
	if f.lag, err = deadlineBurst(ctx, cl, c.nodes, accts, recv, c.conns); err != nil {
		return fmt.Errorf("deadline burst: %w", err)
	}
	if err := <-profiled; err != nil {
		return err
	}
	fmt.Printf("deadline burst: %d pinged in %s; %d of %d alerts, deadlines in %d second(s); lag p50 / p99 / max %s\n",
		f.lag.pinged, f.lag.pingTime.Round(time.Millisecond), f.lag.alerts, f.lag.want, f.lag.deadlines, f.lag.lags.Summary())
	fmt.Printf("  of which deadline to the alert proposed %s; proposed to the webhook %s; the nodes' CPU meanwhile %s (%.0f µs an alert)\n",
		f.lag.raise.Summary(), f.lag.send.Summary(), f.lag.cpu.Round(10*time.Millisecond), float64(f.lag.cpu.Microseconds())/float64(max(1, f.lag.alerts)))
	return nil
}
