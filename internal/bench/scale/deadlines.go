package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"lookout/internal/bench"
	"lookout/internal/client"
)

// lagFigures are what the deadline burst measured.
type lagFigures struct {
	pinged       int
	pingTime     time.Duration
	alerts, want int
	deadlines    int             // distinct seconds the alerts' deadlines fell in
	lags         bench.Latencies // from the deadline to the webhook
	raise        bench.Latencies // from the deadline to the alert's proposal
	send         bench.Latencies // from the proposal to the webhook
	cpu          time.Duration   // the nodes' CPU from the deadline to the last alert
}

// deadlineBurst pings every due-* monitor once, early in a minute, with
// conns requests at once: each then expects its next run at the next whole
// minute and has no grace, so all their deadlines fall in that one second.
// It waits for their monitor.missed alerts at the receiver's webhook and
// measures each one's lag, from the deadline (the alert's occurred_at) to
// its arrival.
func deadlineBurst(ctx context.Context, cl *bench.Cluster, nodes int, accts []account, recv *receiver, conns int) (lagFigures, error) {
	type job struct {
		a *account
		k int
	}
	var jobs []job
	for i := range accts {
		for k := range accts[i].due {
			jobs = append(jobs, job{&accts[i], k})
		}
	}
	f := lagFigures{want: len(jobs)}
	if len(jobs) == 0 {
		return f, nil
	}
	// Start a second into a minute, so that the pings end in it.
	now := time.Now()
	start := now.Truncate(time.Minute).Add(time.Minute + time.Second)
	fmt.Printf("  pinging %d monitors at %s\n", len(jobs), start.Format("15:04:05"))
	if err := bench.Sleep(ctx, time.Until(start)); err != nil {
		return f, err
	}
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range conns {
		g.Go(func() error {
			for {
				n := int(next.Add(1)) - 1
				if n >= len(jobs) {
					return nil
				}
				j := jobs[n]
				ev := client.Event{EventType: "ping", Monitor: dueName(j.k), Status: "complete", EventID: uuid.NewString()}
				if _, err := bench.SendPing(gctx, j.a.ingest, ev, time.Minute); err != nil {
					return fmt.Errorf("ping %s of account %d: %w", ev.Monitor, j.a.index, err)
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return f, err
	}
	f.pinged, f.pingTime = len(jobs), time.Since(start)
	if f.pingTime > 55*time.Second {
		fmt.Printf("  warning: the pings took %s, past the minute: their deadlines fall in two minutes\n", f.pingTime.Round(time.Millisecond))
	}
	// The nodes' CPU from the deadline to the last alert.
	deadline := start.Truncate(time.Minute).Add(time.Minute)
	if err := bench.Sleep(ctx, time.Until(deadline)); err != nil {
		return f, err
	}
	cpu0 := nodesCPU(cl, nodes)
	// Every deadline is at most two minutes away; the alerts get three more.
	due := func(a alertSeen) bool { return a.typ == "monitor.missed" && strings.HasPrefix(a.monitor, "due-") }
	giveUp := time.After(time.Until(start.Truncate(time.Minute).Add(5 * time.Minute)))
	var got []alertSeen
	for {
		if got = recv.seen(due); len(got) >= len(jobs) {
			break
		}
		select {
		case <-ctx.Done():
			return f, ctx.Err()
		case <-giveUp:
			fmt.Printf("  warning: %d of %d alerts arrived in time\n", len(got), len(jobs))
		case <-time.After(250 * time.Millisecond):
			continue
		}
		break
	}
	f.cpu = nodesCPU(cl, nodes) - cpu0
	f.alerts = len(got)
	seconds := map[int64]bool{}
	lags := make(bench.Latencies, 0, len(got))
	for _, a := range got {
		seconds[a.occurredAt.Unix()] = true
		lags = append(lags, a.received.Sub(a.occurredAt))
		f.raise = append(f.raise, a.raised.Sub(a.occurredAt))
		f.send = append(f.send, a.received.Sub(a.raised))
	}
	f.deadlines, f.lags = len(seconds), lags
	return f, nil
}

// nodesCPU is the CPU time the nodes have used.
func nodesCPU(cl *bench.Cluster, nodes int) time.Duration {
	var total time.Duration
	for i := range nodes {
		d, _ := bench.ProcCPU(cl.Pid(i))
		total += d
	}
	return total
}
