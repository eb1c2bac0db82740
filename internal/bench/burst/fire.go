package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"lookout/internal/bench"
	"lookout/internal/client"
)

// job is one cron job of the burst and what became of its two pings.
type job struct {
	a    *account
	name string
	// The event ids of its run and its complete (also their messages, so
	// that they can be recognised when read back).
	runID, completeID string
	// Whether each was acknowledged, and how long after it was due
	// (run: the start; complete: the run's acknowledgement).
	runAcked, completeAcked bool
	runLat, completeLat     time.Duration
	attempts                int
	err                     error
}

// fire starts every job at start, each in its own goroutine: the run
// ping, once acknowledged the complete ping, each retried as lookout ping
// does for giveUp. ingest is the client job j of account a sends with.
func fire(ctx context.Context, start time.Time, accts []*account, giveUp time.Duration, ingest func(a *account, j int) *client.Ingest) []*job {
	var jobs []*job
	for _, a := range accts {
		for k := range a.monitors {
			jobs = append(jobs, &job{a: a, name: jobName(k), runID: "run-" + uuid.NewString(), completeID: "complete-" + uuid.NewString()})
		}
	}
	go0 := make(chan struct{})
	var wg sync.WaitGroup
	for j, jb := range jobs {
		ing := ingest(jb.a, j)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-go0
			jb.run(ctx, ing, giveUp)
		}()
	}
	bench.Sleep(ctx, time.Until(start))
	close(go0)
	wg.Wait()
	return jobs
}

// run sends the job's run, then its complete.
func (jb *job) run(ctx context.Context, ing *client.Ingest, giveUp time.Duration) {
	t0 := time.Now()
	n, err := bench.SendPing(ctx, ing, client.Event{EventType: "ping", Monitor: jb.name, Status: "run",
		Series: jb.runID, EventID: jb.runID, Message: jb.runID}, giveUp)
	jb.attempts += n
	if err != nil {
		jb.err = fmt.Errorf("run: %w", err)
		return
	}
	jb.runAcked, jb.runLat = true, time.Since(t0)
	t1 := time.Now()
	n, err = bench.SendPing(ctx, ing, client.Event{EventType: "ping", Monitor: jb.name, Status: "complete",
		Series: jb.runID, EventID: jb.completeID, Message: jb.completeID, Duration: ptr(0.5), ExitCode: ptr(0)}, giveUp)
	jb.attempts += n
	if err != nil {
		jb.err = fmt.Errorf("complete: %w", err)
		return
	}
	jb.completeAcked, jb.completeLat = true, time.Since(t1)
}

func ptr[T any](v T) *T { return &v }

// results sums the jobs up.
type results struct {
	jobs, acked, failed int
	retries             int
	run, complete, both bench.Latencies
	last                time.Duration // from the start to the last acknowledgement
	firstErr            error
}

func summarise(jobs []*job) results {
	r := results{jobs: len(jobs)}
	for _, jb := range jobs {
		r.acked += btoi(jb.runAcked) + btoi(jb.completeAcked)
		r.retries += jb.attempts - 1 - btoi(jb.runAcked) // pings sent: the run, and the complete once the run was acknowledged
		if jb.err != nil {
			r.failed++
			if r.firstErr == nil {
				r.firstErr = fmt.Errorf("%s: %w", jb.name, jb.err)
			}
		}
		if jb.runAcked {
			r.run = append(r.run, jb.runLat)
		}
		if jb.completeAcked {
			r.complete = append(r.complete, jb.completeLat)
			r.both = append(r.both, jb.runLat+jb.completeLat)
			r.last = max(r.last, jb.runLat+jb.completeLat)
		}
	}
	return r
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (r results) print() {
	fmt.Printf("acknowledged: %d of %d pings (%d jobs, %d failed), %d retries; the last acknowledged %s after the start (%.0f pings/s)\n",
		r.acked, 2*r.jobs, r.jobs, r.failed, r.retries, r.last.Round(time.Millisecond), float64(r.acked)/r.last.Seconds())
	if r.firstErr != nil {
		fmt.Println("  first failure:", r.firstErr)
	}
	fmt.Printf("%-44s %s\n", "latency", "p50 / p99 / max")
	fmt.Printf("%-44s %s\n", "run: from the start to its acknowledgement", r.run.Summary())
	fmt.Printf("%-44s %s\n", "complete: from the run's ack to its own", r.complete.Summary())
	fmt.Printf("%-44s %s\n", "job: from the start to the complete's ack", r.both.Summary())
}
