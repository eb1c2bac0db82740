package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestAgentOfAnAccountServesOnlyIt runs an agent whose token serves one
// account (A) of two: its local ingest takes A's pings (stored by the
// control plane) and answers 401 to B's key, and its /health says it
// gossips with the key the control plane handed out.
func TestAgentOfAnAccountServesOnlyIt(t *testing.T) {
	t.Parallel()
	s := startControl(t)
	b, err := s.admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{Email: "tenant-b@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	a := s.startAgentOf(t, "edge-a", "site-a", []string{s.account.ID}, "--gossip-addr", freeAddr(t))
	ctx := ctxT(t, 60*time.Second)

	// A's key: accepted once the agent has its assignments.
	if err := pingUntil(ctx, a.url, s.account.IngestKey, client.Event{EventType: "ping", Monitor: "a-backup", Status: "complete", EventID: "a-1"}); err != nil {
		t.Fatal(err)
	}
	// B's key: refused by the agent.
	_, err = client.NewIngest(a.url, b.IngestKey, &http.Client{Timeout: 5 * time.Second}).
		Ping(ctx, client.Event{EventType: "ping", Monitor: "b-backup", Status: "complete", EventID: "b-1"})
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("B's ping through A's agent: %v, want 401", err)
	}

	// A's ping reaches the control plane.
	for {
		mons, err := s.mgmt.AllMonitors(ctx, "ping")
		if err == nil && len(mons) == 1 && mons[0].Name == "a-backup" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("A's ping was not stored: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	resp, err := http.Get(a.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct {
		Gossip struct {
			State   string `json:"state"`
			Members int    `json:"members"`
		} `json:"gossip"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil || health.Gossip.State != "on" || health.Gossip.Members != 1 {
		t.Fatalf("/health gossip %+v, %v", health.Gossip, err)
	}
}
