// Command benchingest measures the Ingest API: it starts lookout control
// nodes (one dev node, or a 3-node cluster on loopback), drives POST /ping
// with 64 connections over many monitors and keys, and drives a
// trivial JSON handler the same way, in the same run, for comparison.
//
//	go run ./internal/bench/ingest -lookout bin/lookout -nodes 3 -duration 10s
//
// It is what `make bench-ingest` runs. A benchmark, not a test: it prints
// figures and asserts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"lookout/internal/bench"
)

func main() {
	var (
		binary   = flag.String("lookout", "bin/lookout", "the lookout binary")
		nodes    = flag.Int("nodes", 1, "control nodes: 1 (a dev node) or 3 (a cluster)")
		conns    = flag.Int("conns", 64, "concurrent connections")
		duration = flag.Duration("duration", 10*time.Second, "measured time per target")
		warmup   = flag.Duration("warmup", 2*time.Second, "unmeasured time before each measurement")
		monitors = flag.Int("monitors", 1000, "monitor names pinged")
		accounts = flag.Int("accounts", 8, "accounts (ingest keys) pinging")
		trivial  = flag.String("serve-trivial", "", "internal: serve the trivial handler on this address")
		cpuprof  = flag.String("cpuprofile", "", "write a CPU profile of each node during the measured pings: node 1 to this file, node N to this file with .N appended")
		runs     = flag.Int("runs", 1, "runs, each with fresh nodes and its own trivial handler runs; more than one also prints the medians")
		loadGen  = flag.String("load", "go", "the load generator: go (this program's HTTP client) or wrk (the wrk program, from Debian's package)")
	)
	flag.Parse()
	if *trivial != "" {
		serveTrivial(*trivial)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, config{binary: *binary, nodes: *nodes, conns: *conns, duration: *duration, warmup: *warmup, monitors: *monitors, accounts: *accounts, cpuprofile: *cpuprof, runs: *runs, load: *loadGen}, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchingest:", err)
		os.Exit(1)
	}
}

type config struct {
	binary             string
	nodes, conns       int
	duration, warmup   time.Duration
	monitors, accounts int
	cpuprofile         string
	runs               int
	load               string // "go" or "wrk"
}

// driver is the load generator c names, sending pings with keys (cycling
// through them and the monitor names) to the addresses urls.
func (c config) driver(urls, keys []string) driver {
	if c.load == "wrk" {
		return &wrkLoad{bin: "wrk", conns: c.conns, urls: urls, keys: keys, monitors: c.monitors}
	}
	return newLoad(c.conns, urls, func(i, n int) *http.Request {
		return pingRequest(keys[n%len(keys)], fmt.Sprintf("job-%d", (i*7919+n)%c.monitors))
	})
}

// figures are what one run measured.
type figures struct {
	ratio, p99ms, cpuPerPing float64
}

// run makes c.runs runs and, when there are several, prints the medians.
func run(ctx context.Context, c config, out io.Writer) error {
	if c.nodes != 1 && c.nodes != 3 {
		return fmt.Errorf("-nodes must be 1 or 3")
	}
	if c.load != "go" && c.load != "wrk" {
		return fmt.Errorf("-load must be go or wrk")
	}
	var all []figures
	for i := range max(c.runs, 1) {
		if c.runs > 1 {
			fmt.Fprintf(out, "run %d of %d\n", i+1, c.runs)
		}
		f, err := runOnce(ctx, c, out)
		if err != nil {
			return err
		}
		all = append(all, f)
	}
	if len(all) > 1 {
		med := func(get func(figures) float64) float64 {
			v := make([]float64, len(all))
			for i, f := range all {
				v[i] = get(f)
			}
			slices.Sort(v)
			if n := len(v); n%2 == 0 {
				return (v[n/2-1] + v[n/2]) / 2
			}
			return v[len(v)/2]
		}
		fmt.Fprintln(out, strings.Repeat("=", 78))
		fmt.Fprintf(out, "median of %d runs: ratio %.1f%%, p99 %.2fms, lookout CPU %.0f µs per ping\n", len(all),
			med(func(f figures) float64 { return f.ratio }), med(func(f figures) float64 { return f.p99ms }),
			med(func(f figures) float64 { return f.cpuPerPing }))
	}
	return nil
}

// runOnce measures the trivial handler, then fresh nodes, then the trivial
// handler again, and prints the run's figures.
func runOnce(ctx context.Context, c config, out io.Writer) (figures, error) {
	var f figures
	// The trivial handler runs before the nodes start and after they stop
	// (the ratio is to the mean of the two): one run alone moved by up to
	// a third between runs on an otherwise idle machine. It reads no key.
	before, beforeCPU, err := measureTrivial(ctx, c, make([]string, c.accounts))
	if err != nil {
		return f, err
	}
	cl, err := bench.StartCluster(ctx, c.binary, c.nodes)
	if err != nil {
		return f, err
	}
	defer cl.Stop()
	accts, err := cl.MakeAccounts(ctx, c.accounts)
	if err != nil {
		return f, err
	}
	var keys []string
	for _, a := range accts {
		keys = append(keys, a.IngestKey)
	}
	fmt.Fprintf(out, "lookout: %d node(s), %d connections, %d monitors, %d keys, %s measured after %s warm-up, load generator %s\n",
		c.nodes, c.conns, c.monitors, len(keys), c.duration, c.warmup, c.load)
	pings := c.driver(cl.URLs, keys)
	profiled := make(chan error, 1)
	if c.cpuprofile != "" {
		go func() {
			sleep(ctx, c.warmup)
			profiled <- profileNodes(ctx, cl, c.nodes, c.duration, c.cpuprofile)
		}()
	} else {
		profiled <- nil
	}
	var pids []int
	for i := range c.nodes {
		pids = append(pids, cl.Pid(i))
	}
	cpu := &cpuWindow{pids: pids, urls: cl.URLs}
	ping, err := pings.runMeasured(ctx, c.warmup, c.duration, cpu)
	if err != nil {
		return f, err
	}
	if err := <-profiled; err != nil {
		return f, err
	}
	// The nodes go before the trivial handler runs: left running, they
	// compact and flush what the pings wrote, and the trivial handler got
	// 20-30% less CPU than on an idle machine, in varying amounts.
	cl.Stop()
	after, afterCPU, err := measureTrivial(ctx, c, keys)
	if err != nil {
		return f, err
	}
	trivial := (before.rate() + after.rate()) / 2
	fmt.Fprintln(out, strings.Repeat("-", 78))
	fmt.Fprintln(out, header())
	fmt.Fprintln(out, ping.row(fmt.Sprintf("POST /ping, %d node(s)", c.nodes)))
	fmt.Fprintln(out, before.row("trivial handler, before"))
	fmt.Fprintln(out, after.row("trivial handler, after"))
	fmt.Fprintf(out, "ratio: lookout does %.1f%% of the trivial handler's throughput (%.0f/s, the mean of before and after)\n",
		100*ping.rate()/trivial, trivial)
	if cpu.err == nil && ping.n > 0 {
		// Less sensitive to a shared machine than the rates: what each
		// ping cost the lookout processes, all nodes together.
		fmt.Fprintf(out, "lookout CPU: %.0f µs per ping (%.2f cores busy)\n",
			float64(cpu.used.Microseconds())/float64(ping.n), cpu.used.Seconds()/ping.elapsed.Seconds())
	}
	// The load generator shares the two cores: what it and the trivial
	// handler cost per request says how much of the machine each target got.
	fmt.Fprintf(out, "CPU per request: load generator %s on the pings; trivial handler %s and %s, load generator %s and %s on it\n",
		perRequest(cpu.self, ping), perRequest(beforeCPU.used, before), perRequest(afterCPU.used, after),
		perRequest(beforeCPU.self, before), perRequest(afterCPU.self, after))
	if cpu.berr == nil {
		fmt.Fprintf(out, "group commit: %s\n", cpu.batches)
	}
	f.ratio, f.p99ms = 100*ping.rate()/trivial, float64(ping.p99.Microseconds())/1000
	if cpu.err == nil && ping.n > 0 {
		f.cpuPerPing = float64(cpu.used.Microseconds()) / float64(ping.n)
	}
	return f, nil
}

// perRequest is the CPU time d spread over r's requests, in µs.
func perRequest(d time.Duration, r result) string {
	if r.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f µs", float64(d.Microseconds())/float64(r.n))
}

// measureTrivial starts the trivial handler, drives it as the pings were
// driven, and stops it. The window holds the CPU the handler and the load
// generator used.
func measureTrivial(ctx context.Context, c config, keys []string) (result, *cpuWindow, error) {
	tr, err := startTrivial(ctx)
	if err != nil {
		return result{}, nil, err
	}
	defer tr.stop()
	cpu := &cpuWindow{pids: []int{tr.cmd.Process.Pid}}
	r, err := c.driver([]string{tr.url}, keys).runMeasured(ctx, c.warmup, c.duration, cpu)
	return r, cpu, err
}

// profileNodes takes a CPU profile of every node at once over d: node 1's
// to path, node N's to path.N.
func profileNodes(ctx context.Context, cl *bench.Cluster, nodes int, d time.Duration, path string) error {
	var g errgroup.Group
	for i := range nodes {
		p := path
		if i > 0 {
			p = fmt.Sprintf("%s.%d", path, i+1)
		}
		g.Go(func() error { return cl.CPUProfile(ctx, i, d, p) })
	}
	return g.Wait()
}
