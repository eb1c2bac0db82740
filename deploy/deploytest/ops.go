package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"lookout/control/state"
)

// metricsWanted are series every control node exposes at /metrics from
// its start; the ingest counters appear on a node once it has served a
// ping (the restarted node may have served none).
var metricsWanted = []string{"lookout_raft_state", "lookout_raft_term", "lookout_raft_applied_index", "lookout_raft_leader_changes_total"}

// scrape reads /metrics from every node, as Prometheus would.
func (w *world) scrape(ctx context.Context) (string, error) {
	ingest := 0
	for _, n := range controlNodes {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.url(n)+"/metrics", nil)
		resp, err := w.client().Do(req)
		if err != nil {
			return "", fmt.Errorf("%s /metrics: %w", n, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%s /metrics: %d %v", n, resp.StatusCode, err)
		}
		for _, m := range metricsWanted {
			if !strings.Contains(string(body), "\n"+m) {
				return "", fmt.Errorf("%s /metrics has no %s", n, m)
			}
		}
		if strings.Contains(string(body), "\nlookout_ingest_events_total{") {
			ingest++
		}
	}
	if ingest == 0 {
		return "", fmt.Errorf("no node counts the pings it served (lookout_ingest_events_total)")
	}
	return fmt.Sprintf("every node serves %s; %d count pings", strings.Join(metricsWanted, ", "), ingest), nil
}

// backup saves a snapshot through a node (`lookout admin snapshot save`'s
// call) and checks the file whole, as a restore would.
func (w *world) backup(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var buf bytes.Buffer
	size, err := w.admin(w.live()[0]).SaveSnapshot(ctx, &buf)
	if err != nil {
		return "", fmt.Errorf("snapshot save: %w", err)
	}
	info, err := state.CheckBackup(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d bytes at applied index %d, checked whole", size, info.AppliedIndex), nil
}
