package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestNoMissedAlertsForTheClustersOwnOutage: a 3-node cluster (webhook
// channel to a real receiver on loopback, --outage-after 10s) has a ping
// monitor expected every 60 s whose last run was 55 s ago, so its missed
// deadline is 5 s ahead. The whole cluster is stopped (SIGKILL) for 15 s,
// past that deadline and past --outage-after, and started again: no
// monitor.missed is sent for the outage, and the monitor's next deadline
// restarts from the new leader's start (60 s from it), not from its last
// run.
func TestNoMissedAlertsForTheClustersOwnOutage(t *testing.T) {
	t.Parallel()
	h := newHooks(t)
	nodes := startNodes(t, "o", 3, "--allow-private-targets", "--outage-after", "10s")
	ctx := ctxT(t, 2*time.Minute)
	acct, err := nodes[0].admin.CreateAccount(ctx, client.CreateAccountRequest{Email: "ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	def := true
	cfg, _ := json.Marshal(map[string]string{"url": h.srv.URL})
	if _, err := nodes[1].admin.CreateChannel(ctx, acct.ID, client.CreateChannelRequest{Type: "webhook", Name: "hook", Config: cfg, Default: &def}); err != nil {
		t.Fatal(err)
	}
	base := "http://" + nodes[2].http
	m, err := client.NewManage(base, acct.ManagementKey, nil).CreateMonitorJSON(ctx, []byte(`{"manifest_version":1,"kind":"ping","name":"hourly-ish",
		"timeout_seconds":60,"expected_interval_seconds":60,"grace_seconds":0}`))
	if err != nil {
		t.Fatal(err)
	}
	last := time.Now().Add(-55 * time.Second).Truncate(time.Second)
	ts := last.Unix()
	if _, err := client.NewIngest(base, acct.IngestKey, nil).Ping(ctx, client.Event{EventType: "ping", Monitor: "hourly-ish", Status: "complete", Timestamp: &ts}); err != nil {
		t.Fatal(err)
	}
	deadline := func() time.Time {
		t.Helper()
		for _, n := range nodes {
			code, body := get(t, "http://"+n.http+"/api/v1/monitors/"+m.UUID, "Bearer "+acct.ManagementKey)
			var got struct {
				Status struct {
					State          string `json:"state"`
					NextDeadlineAt string `json:"next_deadline_at"`
				} `json:"status"`
			}
			if code == http.StatusOK && json.Unmarshal([]byte(body), &got) == nil {
				at, err := time.Parse(time.RFC3339Nano, got.Status.NextDeadlineAt)
				if err != nil || got.Status.State != "up" {
					t.Fatalf("status: %s", body)
				}
				return at
			}
		}
		t.Fatal("no node answers")
		return time.Time{}
	}
	if due := deadline(); !due.Equal(last.Add(60 * time.Second)) {
		t.Fatalf("next deadline %v, want the last run + 60 s, %v", due, last.Add(60*time.Second))
	}

	// The whole cluster stops, past the deadline and past --outage-after.
	for _, n := range nodes {
		n.proc.kill()
	}
	time.Sleep(15 * time.Second)
	restart := time.Now()
	for _, n := range nodes {
		n.proc = start(t, n.id+"-again", n.args...)
	}
	waitLeader(t, nodes, 3, 60*time.Second)
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		// The new leader's engine has rebased the deadline once it is at
		// least 60 s after the restart.
		if due := deadline(); due.After(restart.Add(59 * time.Second)) {
			break
		} else if time.Now().After(end) {
			t.Fatalf("next deadline %v: it did not restart from the new leader's start (%v)", due, restart)
		}
		if got := h.of("hourly-ish"); len(got) != 0 {
			t.Fatalf("alerted for the outage: %v", got)
		}
	}
	time.Sleep(3 * time.Second) // a delivery of what was decided would be here by now
	if got := h.of("hourly-ish"); len(got) != 0 {
		t.Fatalf("alerted for the outage: %v", got)
	}
}
