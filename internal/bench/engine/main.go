// Command engine measures the leader's deadline engine in one process: a
// real state store in a temporary directory, commands applied straight to
// it (no raft), a real clock. It makes 100,000 ping monitors that expect a
// ping every 60 s, pings each once so that their missed deadlines fall
// evenly over a minute, runs the engine, and prints the heap memory per
// monitor and the lag of each fired deadline: from its due time to the
// engine's proposal, and to the applied entry.
//
// With -schedule, the monitors expect their runs on a schedule instead,
// to compare what schedules cost the engine: "interval" is
// expected_interval_seconds 60, any other value a schedule such as
// "* * * * *" (cron, each monitor in one of a list of zones) or "1m"
// (the interval shorthand). All are pinged at the same moment, one minute
// before a whole minute, and their grace times run from 0 to 59 s, so
// every such mode has the same deadlines: a late one at the whole minute
// (grace above 0) and a missed one spread over the next minute.
//
//	go run ./internal/bench/engine -monitors 100000
//	go run ./internal/bench/engine -schedule '* * * * *'
//
// It is what `make bench-engine` runs. A benchmark, not a test: it prints
// figures and asserts nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/control/engine"
	"lookout/internal/bench"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

func main() {
	n := flag.Int("monitors", 100000, "ping monitors")
	spread := flag.Duration("spread", time.Minute, "the deadlines fall evenly over this time (at most the 60 s interval)")
	lead := flag.Duration("lead", 20*time.Second, "time from the start of the setup to the first deadline")
	sched := flag.String("schedule", "", `"interval", or a schedule in mixed zones ("* * * * *", "1m"): every monitor pinged at once, grace 0-59 s`)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *n, *spread, *lead, *sched); err != nil {
		fmt.Fprintln(os.Stderr, "bench engine:", err)
		os.Exit(1)
	}
}

// interval is the monitors' expected interval.
const interval = 60 * time.Second

func run(ctx context.Context, n int, spread, lead time.Duration, sched string) error {
	spread = min(spread, interval)
	d, err := bench.OpenDirect("lookout-bench-engine-")
	if err != nil {
		return err
	}
	defer d.Close()
	store := d.Store
	applied := make([]time.Duration, 0, n) // due time to the FireDeadlines' apply
	var appliedMissed []time.Duration      // the same, of the missed deadlines only
	d.OnApply = func(cmd *raftv1.Command, _ *raftv1.Result) {
		for _, fd := range cmd.GetFireDeadlines().GetDeadlines() {
			lag := time.Since(time.UnixMilli(fd.GetDueUnixMs()))
			applied = append(applied, lag)
			if fd.GetKind() == "missed" {
				appliedMissed = append(appliedMissed, lag)
			}
		}
	}
	c := d

	// Setup: an account without limits, n monitors, one ping each.
	start := time.Now()
	firstDue := start.Add(lead)
	var acct string
	total := n // the deadlines that will fire
	if sched == "" {
		acct, err = setup(ctx, c, n, firstDue.Add(-interval), spread)
		fmt.Printf("lookout deadline engine: %d ping monitors (interval 60 s), deadlines over %s; 1 account %s\n", n, spread, acct)
	} else {
		// The late deadlines at a whole minute, the missed ones over the next.
		firstDue = firstDue.Truncate(time.Minute).Add(time.Minute)
		spread = interval
		acct, err = setupScheduled(ctx, c, n, firstDue.Add(-interval), sched)
		total = n + lateDeadlines(n)
		fmt.Printf("lookout deadline engine: %d ping monitors (%s), late at %s, missed over the next minute; 1 account %s\n", n, scheduleLabel(sched), firstDue.UTC().Format("15:04:05"), acct)
	}
	if err != nil {
		return err
	}
	fmt.Printf("setup (monitors and pings through the state machine): %s\n", time.Since(start).Round(time.Millisecond))
	if time.Now().After(firstDue) {
		fmt.Println("warning: the setup outlasted -lead; the first deadlines were due before the engine started")
	}
	count := 0 // warm the state's caches so the rebuild's memory is the engine's
	if err := store.PingMonitors(func(*statev1.Monitor) error { count++; return nil }); err != nil {
		return err
	}

	var mu sync.Mutex
	proposed := make([]time.Duration, 0, n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	e := engine.NewDeadlines(engine.DeadlineOptions{
		Cluster: c, State: store,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "deadlines", Level: hclog.Warn, Output: os.Stderr}),
		OnFire: func(due, at time.Time) {
			mu.Lock()
			proposed = append(proposed, at.Sub(due))
			mu.Unlock()
		},
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); e.Run(runCtx) }()

	rebuildStart := time.Now()
	for s := e.Stats(); s.Scheduled+s.InFlight+int(s.Fired+s.Stale) < total; s = e.Stats() {
		time.Sleep(time.Millisecond)
	}
	rebuilt := time.Since(rebuildStart)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perMonitor := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(count)
	fmt.Printf("rebuild: %d monitors in %s; engine heap %.0f bytes per monitor (%.1f MiB in all)\n",
		count, rebuilt.Round(time.Millisecond), perMonitor, perMonitor*float64(count)/(1<<20))

	limit := time.NewTimer(time.Until(firstDue.Add(spread + 30*time.Second)))
	defer limit.Stop()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
wait:
	for s := e.Stats(); int(s.Fired+s.Stale) < total; s = e.Stats() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-limit.C:
			fmt.Printf("time limit: only %d of %d fired\n", s.Fired+s.Stale, total)
			break wait
		case <-tick.C:
			fmt.Printf("  %s: fired %d, scheduled %d, in flight %d\n", time.Since(start).Round(time.Second), s.Fired, s.Scheduled, s.InFlight)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	<-done

	if sched == "" {
		appliedMissed = nil // every deadline is a missed one
	}
	report(e.Stats(), proposed, applied, appliedMissed)
	return nil
}

// report prints the lag figures (the engine has stopped).
func report(s engine.DeadlineStats, proposed, applied, appliedMissed []time.Duration) {
	fmt.Printf("fired %d, stale %d, errors %d\n", s.Fired, s.Stale, s.Errors)
	fmt.Printf("%-28s %10s %10s %10s %10s %8s\n", "lag from the due time", "count", "p50", "p99", "max", "> 1 s")
	for _, l := range []struct {
		name string
		d    []time.Duration
	}{{"to the proposal", proposed}, {"to the applied entry", applied}, {"  of the missed deadlines", appliedMissed}} {
		if len(l.d) == 0 {
			continue
		}
		slices.Sort(l.d)
		over := len(l.d) - sortSearch(l.d, time.Second)
		q := func(p float64) time.Duration {
			return l.d[min(len(l.d)-1, int(p*float64(len(l.d))))].Round(time.Microsecond)
		}
		fmt.Printf("%-28s %10d %10s %10s %10s %8d\n", l.name, len(l.d), q(0.50), q(0.99), l.d[len(l.d)-1].Round(time.Microsecond), over)
	}
}

// sortSearch is the index of the first lag above limit in sorted d.
func sortSearch(d []time.Duration, limit time.Duration) int {
	i, _ := slices.BinarySearch(d, limit+1)
	return i
}

// benchAccount makes the benchmark's account (a plan without limits) and
// returns its id.
func benchAccount(ctx context.Context, c *bench.Direct) (string, error) {
	acct := uuid.NewString()
	key := func(typ raftv1.KeyType) *raftv1.Key {
		return &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: typ, Hash: []byte(uuid.NewString())}
	}
	return acct, c.Must(ctx, &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: "bench@example.com", Plan: &raftv1.Plan{Name: "bench"},
		IngestKey: key(raftv1.KeyType_KEY_TYPE_INGEST), ManagementKey: key(raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}})
}

// setup makes an account without limits, n ping monitors expecting a ping
// every interval, and pings monitor i at firstPing + i*spread/n.
func setup(ctx context.Context, c *bench.Direct, n int, firstPing time.Time, spread time.Duration) (string, error) {
	acct, err := benchAccount(ctx, c)
	if err != nil {
		return "", err
	}
	name := func(i int) string { return fmt.Sprintf("job-%06d", i) }
	for i := 0; i < n; i += 1000 {
		put := &raftv1.PutMonitors{AccountId: acct}
		for j := i; j < min(n, i+1000); j++ {
			put.Creates = append(put.Creates, &raftv1.MonitorSpec{
				Uuid: uuid.NewString(), Kind: "ping", Name: name(j), Enabled: true,
				ExpectedIntervalSeconds: proto.Int64(int64(interval / time.Second)), GraceSeconds: proto.Int64(0),
			})
		}
		if err := c.Must(ctx, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: put}}); err != nil {
			return "", err
		}
	}
	for i := 0; i < n; i += 256 {
		batch := &raftv1.IngestBatch{RetentionCount: 100}
		for j := i; j < min(n, i+256); j++ {
			at := firstPing.Add(time.Duration(int64(spread) * int64(j) / int64(n)))
			batch.Events = append(batch.Events, &raftv1.Event{AccountId: acct, Monitor: name(j), EventType: "ping", Status: "complete", ReceivedUnixMs: at.UnixMilli()})
		}
		if err := c.Must(ctx, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: batch}}); err != nil {
			return "", err
		}
	}
	return acct, nil
}
