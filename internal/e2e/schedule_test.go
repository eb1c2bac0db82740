package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestScheduledMonitorMissedOnADevNode: on a dev node, a "* * * * *" ping
// monitor in Asia/Kathmandu (+05:45) pinged once is missed at the next
// minute after the ping plus its grace, and a real webhook receiver gets
// monitor.missed once. The ping carries a timestamp two minutes back, so
// that deadline has passed when the ping lands and the test waits only for
// the engine, not for the clock. Then a ping now expects the next minute.
func TestScheduledMonitorMissedOnADevNode(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hooks []map[string]any
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		mu.Lock()
		hooks = append(hooks, body)
		mu.Unlock()
	}))
	defer hook.Close()
	missedHooks := func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		var out []map[string]any
		for _, h := range hooks {
			if h["type"] == "monitor.missed" {
				out = append(out, h)
			}
		}
		return out
	}

	dev := start(t, "dev", "control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0",
		"--raft-addr", "127.0.0.1:0", "--log-level", "warn")
	out := dev.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `is up at (http://[0-9.:]+)`)
	accountID := match(t, out, `account id:\s+(\S+)`)
	mk := match(t, out, `management key:\s+(mk_\S+)`)
	ctx := ctxT(t, time.Minute)
	def := true
	cfg, _ := json.Marshal(map[string]string{"url": hook.URL})
	if _, err := client.NewAdmin(base, match(t, out, `admin token:\s+(adm_[a-z0-9]+)`), nil).CreateChannel(ctx, accountID,
		client.CreateChannelRequest{Type: "webhook", Name: "hook", Config: cfg, Default: &def}); err != nil {
		t.Fatal(err)
	}
	m, err := client.NewManage(base, mk, nil).CreateMonitorJSON(ctx, []byte(`{"manifest_version":1,"kind":"ping","name":"every-minute",
		"timeout_seconds":60,"schedule":"* * * * *","timezone":"Asia/Kathmandu","grace_seconds":5}`))
	if err != nil {
		t.Fatal(err)
	}
	status := func() map[string]any {
		t.Helper()
		code, body := get(t, base+"/api/v1/monitors/"+m.UUID, "Bearer "+mk)
		var got struct{ Status map[string]any }
		if code != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("GET monitor: %d %s", code, body)
		}
		return got.Status
	}
	if st := status(); st["state"] != "new" || st["next_expected_at"] == nil || st["next_deadline_at"] != nil {
		t.Fatalf("before the first ping: %v", st)
	}

	ingest := client.NewIngest(base, match(t, out, `ingest key:\s+(ck_\S+)`), nil)
	sent := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	ts := sent.Unix()
	if _, err := ingest.Ping(ctx, client.Event{EventType: "ping", Monitor: "every-minute", Status: "complete", Timestamp: &ts}); err != nil {
		t.Fatal(err)
	}
	expected := sent.Truncate(time.Minute).Add(time.Minute)
	missedAt := expected.Add(5 * time.Second)
	for deadline := time.Now().Add(20 * time.Second); len(missedHooks()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no monitor.missed webhook; got %v", hooks)
		}
	}
	got := missedHooks()[0]
	if at, err := time.Parse(time.RFC3339, got["occurred_at"].(string)); err != nil || !at.Equal(missedAt) {
		t.Fatalf("missed at %v (%v), want the next minute after the ping plus grace, %v", got["occurred_at"], err, missedAt.UTC())
	}
	if st := status(); st["state"] != "down" || st["next_expected_at"] != expected.UTC().Format(time.RFC3339) || st["next_deadline_at"] != nil {
		t.Fatalf("after the miss: %v", st)
	}
	// Once: the missed run has no second deadline until the next ping.
	time.Sleep(time.Second)
	if n := len(missedHooks()); n != 1 {
		t.Fatalf("%d monitor.missed webhooks, want 1", n)
	}

	// A ping now expects the first minute after it.
	if _, err := ingest.Ping(context.Background(), client.Event{EventType: "ping", Monitor: "every-minute", Status: "complete"}); err != nil {
		t.Fatal(err)
	}
	st := status()
	last, err := time.Parse(time.RFC3339Nano, st["last_ping_at"].(string))
	if err != nil || st["state"] != "up" || st["next_expected_at"] != last.Truncate(time.Minute).Add(time.Minute).UTC().Format(time.RFC3339) {
		t.Fatalf("after a ping now: %v", st)
	}
}
