package e2e

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestAgentDataDirRemovedThenKilled removes a running agent's whole data
// dir while its control node is down (so the pings stay in its buffer),
// keeps pinging, then kills the agent (SIGKILL) and starts it again while
// the control node is still down, and finally brings the control node
// back: every ping the agent answered 200, before the removal and after
// it, is stored exactly once. (The agent answers 503 while it moves its
// buffer into a new directory; the pings' retries keep them.)
func TestAgentDataDirRemovedThenKilled(t *testing.T) {
	t.Parallel()
	s := startControl(t)
	a := s.startAgent(t, "edge-disk", "site-d")
	dataDir := a.args[slices.Index(a.args, "--data-dir")+1]
	key := s.account.IngestKey
	ctx := ctxT(t, 4*time.Minute)
	if err := pingUntil(ctxT(t, 60*time.Second), a.url, key, client.Event{EventType: "ping", Monitor: "warmup", Status: "complete", EventID: "warmup"}); err != nil {
		t.Fatalf("the agent never accepted a ping: %v", err)
	}
	s.control.kill()

	const total = 100
	for i := range total {
		switch i {
		case 30:
			if err := os.RemoveAll(dataDir); err != nil {
				t.Fatal(err)
			}
		case 70:
			a.proc.kill()
			a.restart(t)
		}
		msg := fmt.Sprintf("d-%03d", i)
		ev := client.Event{EventType: "ping", Monitor: fmt.Sprintf("disk-%d", i%5), Status: "complete", Message: msg, EventID: msg}
		if err := pingUntil(ctx, a.url, key, ev); err != nil {
			t.Fatal(err)
		}
	}
	s.control = start(t, "control-again", s.controlArgs...)

	deadline := time.Now().Add(2 * time.Minute)
	for {
		seen, dup, err := storedMessages(ctx, s.mgmt)
		if err == nil && dup != "" {
			t.Fatalf("ping %s is stored twice", dup)
		}
		if err == nil && len(seen) == total {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acknowledged pings stored (last error: %v)", len(seen), total, err)
		}
		time.Sleep(time.Second)
	}
}
