package agentrpc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"lookout/control/agentrpc"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
)

// TestMalformedIdentityRefused: an Assignments stream or a Heartbeat whose
// agent identity is malformed (no id, a garbage id, a name that is not
// text) is refused with INVALID_ARGUMENT, a permanent error, and nothing
// is reported to presence; a sound identity is recorded.
func TestMalformedIdentityRefused(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	n := newOneNode(t, agentrpc.Options{Presence: rec}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, id := range []*agentv1.AgentIdentity{
		nil,
		{Name: "edge"},
		{Id: "\x00\x01garbage id", Name: "edge"},
		{Id: strings.Repeat("a", 65)},
		{Id: "ag_1", Name: "edge\x07"},
	} {
		_, err := n.client.Heartbeat(ctx, connect.NewRequest(&agentv1.HeartbeatRequest{Agent: id}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("heartbeat of %v: %v, want invalid_argument", id, err)
		}
		st, err := n.client.Assignments(ctx, connect.NewRequest(&agentv1.AssignmentsRequest{Agent: id}))
		if err == nil {
			if st.Receive() {
				t.Errorf("stream of %v: got %v", id, st.Msg())
			}
			err = st.Err()
			st.Close()
		}
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("stream of %v: %v, want invalid_argument", id, err)
		}
	}
	if got := rec.all(); len(got) != 0 {
		t.Fatalf("presence told %v", got)
	}
	if _, err := n.client.Heartbeat(ctx, connect.NewRequest(&agentv1.HeartbeatRequest{Agent: testAgent})); err != nil {
		t.Fatal(err)
	}
	if got := rec.all(); len(got) != 1 || got[0].AgentID != "ag_test" {
		t.Fatalf("presence told %v", got)
	}
}

// TestAgentNameBreakingTheRuleIsRefused: an agent that names itself with
// a control character, a bidirectional override or nothing visible is
// refused INVALID_ARGUMENT by every call that records its name, and
// nothing of it is recorded; a name in any script is fine.
func TestAgentNameBreakingTheRuleIsRefused(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	n := newOneNode(t, agentrpc.Options{Presence: rec}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{"edge\x1b[2J", "edge\x00", "edge\u202e1", "\u200b\u200d"} {
		agent := &agentv1.AgentIdentity{Id: "a1", Name: name}
		_, err := n.client.Heartbeat(ctx, connect.NewRequest(&agentv1.HeartbeatRequest{Agent: agent}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("heartbeat as %+q: %v, want INVALID_ARGUMENT", name, err)
		}
		_, err = n.client.ReportExecutions(ctx, connect.NewRequest(&agentv1.ReportExecutionsRequest{Agent: agent}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("report executions as %+q: %v, want INVALID_ARGUMENT", name, err)
		}
		stream, err := n.client.Assignments(ctx, connect.NewRequest(&agentv1.AssignmentsRequest{Agent: agent}))
		if err == nil {
			stream.Receive()
			err = stream.Err()
			stream.Close()
		}
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("assignments as %+q: %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if seen := rec.all(); len(seen) != 0 {
		t.Fatalf("refused agents were recorded: %+v", seen)
	}
	ok := &agentv1.AgentIdentity{Id: "a1", Name: "エッジ-1 👨\u200d👩"}
	if _, err := n.client.Heartbeat(ctx, connect.NewRequest(&agentv1.HeartbeatRequest{Agent: ok})); err != nil {
		t.Fatal(err)
	}
	if seen := rec.all(); len(seen) != 1 || seen[0].Name != ok.GetName() {
		t.Fatalf("recorded %+v", seen)
	}
}
