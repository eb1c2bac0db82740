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
