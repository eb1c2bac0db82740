package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestRotatedTokenForwardsTheAgentsBuffer: pings an agent accepted while
// cut off reach the control plane after its token is rotated, the old
// one revoked, and the agent restarted with the new token.
func TestRotatedTokenForwardsTheAgentsBuffer(t *testing.T) {
	t.Parallel()
	s := startControl(t)
	old, err := s.admin.CreateAgentToken(ctxT(t, 20*time.Second), client.CreateAgentTokenRequest{Region: "site-r", Name: "edge-r"})
	if err != nil {
		t.Fatal(err)
	}
	a := s.startAgentWith(t, "edge-r", "site-r", old.Token)
	key := s.account.IngestKey
	if err := pingUntil(ctxT(t, 60*time.Second), a.url, key, client.Event{EventType: "ping", Monitor: "warmup", Status: "complete", EventID: "warmup"}); err != nil {
		t.Fatalf("the agent never accepted a ping: %v", err)
	}

	s.control.kill()
	const total = 20
	for i := range total {
		msg := fmt.Sprintf("cut-%02d", i)
		if err := pingUntil(ctxT(t, 30*time.Second), a.url, key, client.Event{EventType: "ping", Monitor: "nightly", Status: "complete", Message: msg, EventID: msg}); err != nil {
			t.Fatal(err)
		}
	}
	a.proc.kill()
	s.control = start(t, "control-again", s.controlArgs...)
	ctx := ctxT(t, 2*time.Minute)
	var rotated *client.CreatedAgentToken
	for rotated == nil {
		if rotated, err = s.admin.RotateAgentToken(ctx, old.ID); err != nil && ctx.Err() != nil {
			t.Fatalf("rotate: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rotated.Replaces != old.ID || rotated.Region != "site-r" {
		t.Fatalf("rotated %+v", rotated)
	}
	if err := s.admin.RevokeAgentToken(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	a.args[slices.Index(a.args, old.Token)] = rotated.Token
	a.restart(t)

	for {
		seen, dup, err := storedMessages(ctx, s.mgmt)
		if err == nil && dup != "" {
			t.Fatalf("ping %s is stored twice", dup)
		}
		if err == nil && len(seen) == total {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%d of the %d pings buffered under the old token are stored (last error: %v)", len(seen), total, err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The agent list names the token the agent now uses.
	for {
		list, err := s.admin.Agents(ctx)
		if err == nil && len(list.Agents) == 1 && list.Agents[0].TokenID == rotated.ID {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("agents %+v (%v), want one with token %s", list, err, rotated.ID)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
