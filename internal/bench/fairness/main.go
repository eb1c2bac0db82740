// Command fairness measures how far one account's hung targets delay
// another account's checks and alerts, in one process: a real state store
// in a temporary directory, commands applied straight to it (no raft),
// the leader's real check scheduler and alert dispatcher with the real
// HTTP probe and webhook channel, all on loopback.
//
// Account A has 100 http_checks every minute (60 s timeout) and 30
// failing ping monitors alerting 10 webhook channels, all at a listener
// that accepts and never answers. Account B has one http_check every
// 30 s and one webhook channel at a server that answers at once, and
// raises an alert every 10 s (its ping monitor fails, then recovers).
// It prints the delay from each of B's slots to its execution's start
// and from each of B's alerts being raised to its delivery.
//
//	go run ./internal/bench/fairness            # the default share, 8
//	go run ./internal/bench/fairness -share 0   # no per-account bound
//
// It is what `make bench-fairness` runs. A benchmark, not a test: it
// prints figures and asserts nothing.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	var o options
	flag.IntVar(&o.share, "share", 8, "per-account share of the check workers and of the alert delivery slots (0: no bound)")
	flag.DurationVar(&o.duration, "duration", 2*time.Minute, "how long B's check and alerts are measured")
	flag.IntVar(&o.checks, "checks", 100, "A's http_checks at the hanging listener")
	flag.Int64Var(&o.timeout, "timeout", 60, "A's checks' timeout, seconds")
	flag.IntVar(&o.channels, "channels", 10, "A's webhook channels at the hanging listener")
	flag.IntVar(&o.failing, "failing", 30, "A's failing monitors (each alerts every channel)")
	flag.DurationVar(&o.alertEvery, "alert-every", 10*time.Second, "how often B raises an alert")
	flag.Parse()
	if o.share < 0 || o.checks < 0 || o.channels < 1 || o.failing < 0 || o.timeout < 1 || o.timeout > 60 || o.duration <= 0 || o.alertEvery <= 0 {
		fmt.Fprintln(os.Stderr, "bench fairness: bad flags (share >= 0, channels >= 1, timeout 1 to 60, positive durations)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "bench fairness:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	share                     int
	duration, alertEvery      time.Duration
	checks, channels, failing int
	timeout                   int64
}

// shareOption is the share as checks.Options and alert.DispatcherOptions
// take it (negative: no bound).
func (o options) shareOption() int {
	if o.share == 0 {
		return -1
	}
	return o.share
}
