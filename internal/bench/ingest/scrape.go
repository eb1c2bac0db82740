package main

import (
	"context"
	"fmt"

	"lookout/internal/bench"
)

// batchFigures are the nodes' group-commit counters, summed over the nodes,
// read from their /metrics (open in the bench cluster).
type batchFigures struct {
	batches, events float64 // lookout_ingest_batch_events count and sum
	applies, apply  float64 // lookout_raft_apply_duration_seconds{result="ok"} count and sum
}

// scrapeBatches reads the figures of every node in urls.
func scrapeBatches(ctx context.Context, urls []string) (batchFigures, error) {
	var f batchFigures
	for _, u := range urls {
		m, err := bench.Scrape(ctx, u, "")
		if err != nil {
			return f, err
		}
		f.batches += m["lookout_ingest_batch_events_count"]
		f.events += m["lookout_ingest_batch_events_sum"]
		f.applies += m[`lookout_raft_apply_duration_seconds_count{result="ok"}`]
		f.apply += m[`lookout_raft_apply_duration_seconds_sum{result="ok"}`]
	}
	return f, nil
}

// since is f minus an earlier reading.
func (f batchFigures) since(o batchFigures) batchFigures {
	return batchFigures{f.batches - o.batches, f.events - o.events, f.applies - o.applies, f.apply - o.apply}
}

// String says the mean batch and the mean raft apply (every command the
// nodes proposed, ingest batches being nearly all of them under load).
func (f batchFigures) String() string {
	if f.batches == 0 || f.applies == 0 {
		return "no batches"
	}
	return fmt.Sprintf("%.0f batches, %.1f events per batch; raft apply %.2f ms mean",
		f.batches, f.events/f.batches, 1000*f.apply/f.applies)
}
