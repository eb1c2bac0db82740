package agentrpc_test

import (
	"fmt"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	"lookout/cluster/clustertest"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestAssignmentsStream opens the stream on the leader and on a follower:
// the initial difference holds the region's check and the account's
// ingest key (not another region's check, not a management key), then
// live changes arrive: a new check of the region, a disabled check
// removed, a revoked key removed.
func TestAssignmentsStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	mine, other := uuid.NewString(), uuid.NewString()
	e.putCheck(t, mine, true, true, region, "us-1")
	e.putCheck(t, other, true, true, "us-1")
	for _, role := range []string{"leader", "follower"} {
		t.Run(role, func(t *testing.T) {
			n := e.c.Leader(10 * time.Second)
			if role == "follower" {
				n = e.c.Follower()
			}
			// The follower serves its own state: let it apply what the
			// leader acknowledged.
			if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
			s := openStream(t, client(n, e.token), &agentv1.AssignmentsRequest{Agent: &agentv1.AgentIdentity{Id: "a1", Name: "host-1"}})
			checks, keys, removed := s.initial(t)
			if len(checks) != 1 || checks[mine] == nil || len(removed) != 0 {
				t.Fatalf("initial checks %v removed %v, want only %s", checks, removed, mine)
			}
			if c := checks[mine]; c.GetKind() != "http_check" || c.GetConfig().GetUrl() != "https://example.com/"+mine || c.GetAccountId() != e.acct || c.GetVersion() == 0 {
				t.Fatalf("check %v", c)
			}
			if len(keys) != 1 || keys[e.keyID] == nil || len(keys[e.keyID].GetHash()) == 0 || keys[e.keyID].GetPlan().GetIngestBurst() != 20 {
				t.Fatalf("initial keys %v, want the ingest key %s with its plan", keys, e.keyID)
			}

			// A new check of the region appears.
			added := uuid.NewString()
			e.putCheck(t, added, true, true, region)
			if m := s.next(t); len(m.GetChecks()) != 1 || m.GetChecks()[0].GetId() != added || m.GetSynced() {
				t.Fatalf("after a new check: %v", m)
			}
			// Disabled: removed.
			e.putCheck(t, added, false, false, region)
			if m := s.next(t); len(m.GetRemovedChecks()) != 1 || m.GetRemovedChecks()[0] != added || len(m.GetChecks()) != 0 {
				t.Fatalf("after disabling: %v", m)
			}
			s.cancel()
		})
	}

	// A revoked key is removed (on a follower's stream).
	f := e.c.Follower()
	if err := f.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	s := openStream(t, client(f, e.token), &agentv1.AssignmentsRequest{})
	s.initial(t)
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_RevokeKey{RevokeKey: &raftv1.RevokeKey{AccountId: e.acct, KeyId: e.keyID}}})
	if m := s.next(t); len(m.GetRemovedKeys()) != 1 || m.GetRemovedKeys()[0] != e.keyID {
		t.Fatalf("after revoking the key: %v", m)
	}

	// Presence heard of the streams: opened (connected) and closed.
	var opened, closed int
	for _, seen := range e.presence.all() {
		if seen.Region != region || seen.TokenID != e.tokenID || seen.Heartbeat {
			t.Fatalf("presence told %+v", seen)
		}
		if seen.Connected {
			opened++
		} else {
			closed++
		}
	}
	if opened < 3 || closed < 2 {
		t.Fatalf("presence heard %d opened and %d closed streams, want 3 and at least 2", opened, closed)
	}
}

// TestAssignmentsHeldNotResent: an agent that says what it holds gets only
// the difference: nothing for items it holds at their version, the item
// whose version changed, and the removal of one it should not hold.
func TestAssignmentsHeldNotResent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := uuid.NewString(), uuid.NewString()
	e.putCheck(t, a, true, true, region)
	e.putCheck(t, b, true, true, region)
	f := e.c.Follower()
	if err := f.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	s := openStream(t, client(f, e.token), &agentv1.AssignmentsRequest{})
	checks, keys, _ := s.initial(t)
	s.cancel()

	held := &agentv1.AssignmentsRequest{
		Checks: []*agentv1.Held{{Id: a, Version: checks[a].GetVersion()}, {Id: b, Version: checks[b].GetVersion() + 1}, {Id: "gone", Version: 7}},
		Keys:   []*agentv1.Held{{Id: e.keyID, Version: keys[e.keyID].GetVersion()}},
	}
	s = openStream(t, client(f, e.token), held)
	got, gotKeys, removed := s.initial(t)
	// Nothing changes: only keepalives follow, empty, with the node's clock.
	for range 2 {
		select {
		case m, ok := <-s.msgs:
			if !ok || len(m.GetChecks())+len(m.GetRemovedChecks())+len(m.GetKeys())+len(m.GetRemovedKeys()) > 0 || m.GetSynced() || m.GetServerUnixMs() == 0 {
				t.Fatalf("keepalive %v (stream open: %v)", m, ok)
			}
		case <-time.After(10 * keepalive):
			t.Fatal("no keepalive")
		}
	}
	if len(got) != 1 || got[b] == nil || len(gotKeys) != 0 || len(removed) != 1 || removed[0] != "gone" {
		t.Fatalf("difference: checks %v keys %v removed %v; want check %s again and %q removed", got, gotKeys, removed, b, "gone")
	}
	if got[b].GetVersion() != checks[b].GetVersion() {
		t.Fatalf("version %d on the second stream, %d on the first", got[b].GetVersion(), checks[b].GetVersion())
	}
}

// TestRevokedTokenIsCut: revoking an agent token through raft ends an open
// stream on a follower with UNAUTHENTICATED within 5 s, and unary calls
// are refused at once.
func TestRevokedTokenIsCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.c.Follower()
	c := client(f, e.token)
	s := openStream(t, c, &agentv1.AssignmentsRequest{})
	s.initial(t)
	if _, err := c.Heartbeat(clustertest.Context(t, 5*time.Second), connect.NewRequest(&agentv1.HeartbeatRequest{Agent: testAgent})); err != nil {
		t.Fatalf("heartbeat before revocation: %v", err)
	}
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_RevokeAgentToken{RevokeAgentToken: &raftv1.RevokeAgentToken{Id: e.tokenID}}})
	revoked := time.Now()
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		select {
		case _, ok := <-s.msgs:
			done = !ok
		case <-deadline:
			t.Fatal("stream still open 5 s after the revocation")
		}
	}
	if connect.CodeOf(s.err) != connect.CodeUnauthenticated {
		t.Fatalf("stream ended with %v, want unauthenticated", s.err)
	}
	t.Logf("stream cut %v after the revocation", time.Since(revoked))
	if err := f.ConsistentRead(clustertest.Context(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Heartbeat(clustertest.Context(t, 5*time.Second), connect.NewRequest(&agentv1.HeartbeatRequest{}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("heartbeat after revocation: %v", err)
	}
	// An unknown or malformed token is refused too.
	for _, tok := range []string{"at_nothing", "ck_wrongkind"} {
		if _, err := client(f, tok).Heartbeat(clustertest.Context(t, 5*time.Second), connect.NewRequest(&agentv1.HeartbeatRequest{})); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("token %q: %v", tok, err)
		}
	}
}

// TestNewTokenOnFollower: a token created on the leader works on a
// follower at once (a miss is checked after a consistent read), and a
// heartbeat reaches Presence.
func TestNewTokenOnFollower(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := range 5 {
		token, id := e.newToken(t, fmt.Sprintf("r-%d", i))
		for _, n := range e.c.Nodes {
			res, err := client(n, token).Heartbeat(clustertest.Context(t, 5*time.Second), connect.NewRequest(&agentv1.HeartbeatRequest{
				Agent: &agentv1.AgentIdentity{Id: "a1", Name: "host-1", Version: "v1"}, BufferedEvents: 3, Members: []string{"a1"}}))
			if err != nil || res.Msg.GetServerUnixMs() == 0 {
				t.Fatalf("new token on node %s: %v", n.ID(), err)
			}
		}
		var beats int
		for _, s := range e.presence.all() {
			if s.TokenID == id && s.Heartbeat && s.Connected && s.BufferedEvents == 3 && s.Name == "host-1" && s.Region == fmt.Sprintf("r-%d", i) && s.Node != "" {
				beats++
			}
		}
		if beats != 3 {
			t.Fatalf("presence heard %d heartbeats of token %d, want 3", beats, i)
		}
	}
}
