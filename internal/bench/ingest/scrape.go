package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+u+"/metrics", nil)
		if err != nil {
			return f, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return f, fmt.Errorf("metrics: %w", err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			name, val, ok := strings.Cut(sc.Text(), " ")
			if !ok {
				continue
			}
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				continue
			}
			switch name {
			case "lookout_ingest_batch_events_count":
				f.batches += v
			case "lookout_ingest_batch_events_sum":
				f.events += v
			case `lookout_raft_apply_duration_seconds_count{result="ok"}`:
				f.applies += v
			case `lookout_raft_apply_duration_seconds_sum{result="ok"}`:
				f.apply += v
			}
		}
		resp.Body.Close()
		if err := sc.Err(); err != nil {
			return f, err
		}
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
