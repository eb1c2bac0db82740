package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lookout/internal/bench"
	"lookout/internal/client"
)

// TestMetricsCountPingsAndAlerts scrapes /metrics of a dev node before
// and after pings (stored, refused by key, refused as invalid) and an
// alert delivered to a webhook, and checks that the counters moved by
// exactly what was sent. It also checks --metrics-token and that pprof
// needs the admin token.
func TestMetricsCountPingsAndAlerts(t *testing.T) {
	t.Parallel()
	var hooks atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooks.Add(1)
	}))
	defer hook.Close()

	dev := start(t, "dev", "control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0",
		"--raft-addr", "127.0.0.1:0", "--log-level", "warn", "--metrics-token", "mtok")
	out := dev.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `is up at (http://[0-9.:]+)`)
	adminToken := match(t, out, `admin token:\s+(adm_[a-z0-9]+)`)
	accountID := match(t, out, `account id:\s+(\S+)`)
	ingestKey := match(t, out, `ingest key:\s+(ck_\S+)`)

	// The metrics token is required, and the admin token is not it.
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + adminToken} {
		if code, _ := get(t, base+"/metrics", auth); code != http.StatusUnauthorized {
			t.Fatalf("GET /metrics with %q: %d, want 401", auth, code)
		}
	}
	before := scrape(t, base)
	if before["lookout_raft_state{state=\"leader\"}"] != 1 || before["lookout_raft_term"] < 1 || before["lookout_raft_leader_changes_total"] < 1 {
		t.Fatalf("raft metrics of a leader: state %v term %v leader changes %v", before["lookout_raft_state{state=\"leader\"}"], before["lookout_raft_term"], before["lookout_raft_leader_changes_total"])
	}
	if before["go_goroutines"] == 0 || before["process_start_time_seconds"] == 0 {
		t.Fatal("no Go or process metrics")
	}

	ctx := context.Background()
	admin := client.NewAdmin(base, adminToken, nil)
	cfg, _ := json.Marshal(map[string]string{"url": hook.URL})
	if _, err := admin.CreateChannel(ctx, accountID, client.CreateChannelRequest{Type: "webhook", Name: "hook", Config: cfg}); err != nil {
		t.Fatal(err)
	}
	ingest := client.NewIngest(base, ingestKey, nil)
	for _, ev := range []client.Event{
		{EventType: "ping", Monitor: "nightly", Status: "complete"},
		{EventType: "ping", Monitor: "nightly", Status: "complete"},
		{EventType: "ping", Monitor: "backup", Status: "fail"}, // raises an alert
	} {
		if _, err := ingest.Ping(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := get(t, base+"/ping/nightly?api_key=ck_nosuchkey", ""); code != http.StatusUnauthorized {
		t.Fatalf("ping with a wrong key: %d", code)
	}
	if code, _ := get(t, base+"/ping/nightly?api_key="+ingestKey+"&status=bogus", ""); code != http.StatusBadRequest {
		t.Fatalf("ping with a bad status: %d", code)
	}

	// The alert is delivered, and counted once its delivery is recorded:
	// queued, then delivered. Both are waited for, as one scrape gathers
	// the counters concurrently and may read queued just before it moves
	// and delivered just after.
	var after map[string]float64
	moved := func(name string) float64 { return after[name] - before[name] }
	deadline := time.Now().Add(30 * time.Second)
	for {
		after = scrape(t, base)
		if (moved(`lookout_alert_deliveries_delivered_total{channel="webhook"}`) >= 1 &&
			moved(`lookout_alert_deliveries_queued_total{channel="webhook"}`) >= 1) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for name, want := range map[string]float64{
		`lookout_ingest_events_total{outcome="stored"}`:               3,
		`lookout_ingest_events_total{outcome="unauthorized"}`:         1,
		`lookout_ingest_events_total{outcome="invalid"}`:              1,
		`lookout_ingest_batch_events_sum`:                             3,
		`lookout_alert_deliveries_queued_total{channel="webhook"}`:    1,
		`lookout_alert_deliveries_delivered_total{channel="webhook"}`: 1,
		`lookout_alert_deliveries_failed_total{channel="webhook"}`:    0,
	} {
		if got := moved(name); got != want {
			t.Errorf("%s moved by %v, want %v", name, got, want)
		}
	}
	if hooks.Load() != 1 {
		t.Errorf("webhook called %d times, want 1", hooks.Load())
	}
	if moved(`lookout_ingest_batches_total{result="ok"}`) < 1 || moved(`lookout_raft_apply_duration_seconds_count{result="ok"}`) < 2 {
		t.Errorf("batches %v, applies %v: want at least 1 and 2", moved(`lookout_ingest_batches_total{result="ok"}`), moved(`lookout_raft_apply_duration_seconds_count{result="ok"}`))
	}
	if after["lookout_raft_applied_index"] <= before["lookout_raft_applied_index"] {
		t.Errorf("applied index %v, was %v", after["lookout_raft_applied_index"], before["lookout_raft_applied_index"])
	}

	// pprof is served under /admin/v1, behind the admin token.
	for _, path := range []string{"/admin/v1/debug/pprof/", "/admin/v1/debug/pprof/goroutine?debug=1"} {
		if code, _ := get(t, base+path, "Bearer mtok"); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the admin token: %d, want 401", path, code)
		}
		if code, body := get(t, base+path, "Bearer "+adminToken); code != http.StatusOK || !strings.Contains(body, "goroutine") {
			t.Errorf("GET %s: %d %.200s", path, code, body)
		}
	}
}

// get sends GET url with an Authorization header (none when empty).
func get(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads /metrics (text format) into sample name with labels ->
// value.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	m, err := bench.Scrape(context.Background(), strings.TrimPrefix(base, "http://"), "mtok")
	if err != nil {
		t.Fatal(err)
	}
	return m
}
