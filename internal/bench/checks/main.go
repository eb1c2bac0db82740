// Command checks measures the check scheduler with 10,000 http_checks
// every minute against a trivial HTTP server in this process, in two parts:
//
//   - node: a real `lookout control --dev` process (raft, Badger, the
//     Management API, the scheduler and the HTTP probe as shipped). The
//     checks are applied through the Management API in parts of 1,000;
//     after a settling time it measures the node's CPU over whole minutes
//     of slots. The target server records when each check's request
//     arrives: minus the check's slot (internal/schedule, from the uuids
//     the API lists) that is the lag of every slot, an upper bound of the
//     scheduling lag (it includes the proposal of the running execution
//     through raft, and the connection); a slot without a request is a
//     skipped one. The Management API allows 60 requests a minute a key,
//     so started_at - slot itself is read for a sample of 50 checks. The
//     node's live heap comes from its GODEBUG=gctrace=1 lines.
//
//   - inproc: the same checks in a real state store in a temporary
//     directory and the real scheduler in this process, with an applier
//     that applies each command to the store directly (no raft). It gives
//     the scheduler's own heap per check (runtime.MemStats around its
//     rebuild), and the lag from the scheduler's OnStart hook without
//     raft's share.
//
//     go run ./internal/bench/checks -lookout bin/lookout -checks 10000 -minutes 3
//
// It is what `make bench-checks` runs. A benchmark, not a test: it prints
// figures and asserts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"time"
)

func main() {
	binary := flag.String("lookout", "bin/lookout", "the lookout binary")
	n := flag.Int("checks", 10000, "http_checks, each every minute")
	minutes := flag.Int("minutes", 3, "whole minutes of slots measured on the node")
	settle := flag.Duration("settle", 15*time.Second, "wait after the last apply before the measured window")
	inprocFor := flag.Duration("inproc", 95*time.Second, "length of the in-process part (0: skip it)")
	delay := flag.Duration("delay", 0, "the target server's delay before each answer (a slow site)")
	skipNode := flag.Bool("skip-node", false, "skip the part on a lookout process")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	target, err := startTarget(*delay)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench checks:", err)
		os.Exit(1)
	}
	defer target.close()
	if !*skipNode {
		if err := runNode(ctx, *binary, target, *n, *minutes, *settle); err != nil {
			fmt.Fprintln(os.Stderr, "bench checks (node):", err)
			os.Exit(1)
		}
	}
	if *inprocFor > 0 {
		if err := runInproc(ctx, target, *n, *inprocFor); err != nil {
			fmt.Fprintln(os.Stderr, "bench checks (inproc):", err)
			os.Exit(1)
		}
	}
}

// lagRow prints one row of lag figures (d is sorted in place).
func lagRow(name string, d []time.Duration) {
	if len(d) == 0 {
		fmt.Printf("%-34s %8d\n", name, 0)
		return
	}
	slices.Sort(d)
	q := func(p float64) time.Duration {
		return d[min(len(d)-1, int(p*float64(len(d))))].Round(100 * time.Microsecond)
	}
	over, _ := slices.BinarySearch(d, time.Second+1)
	fmt.Printf("%-34s %8d %10s %10s %10s %10s %8d\n", name, len(d), q(0.50), q(0.99), q(0.999), d[len(d)-1].Round(100*time.Microsecond), len(d)-over)
}

// lagHeader prints the header of lagRow's table.
func lagHeader() {
	fmt.Printf("%-34s %8s %10s %10s %10s %10s %8s\n", "lag from slot to attempt start", "count", "p50", "p99", "p99.9", "max", "> 1 s")
}
