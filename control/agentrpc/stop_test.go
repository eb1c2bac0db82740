package agentrpc_test

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"

	"lookout/control/agentrpc"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
)

// TestStopEndsStreams: a node shutting down ends its assignment streams
// UNAVAILABLE at once (its agents go to another node) instead of making
// the HTTP server's Shutdown wait for them, and records no "stream closed"
// sighting that could land after the agent's reconnect elsewhere.
func TestStopEndsStreams(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	n := newOneNode(t, agentrpc.Options{Presence: rec}, nil)
	svc, c, srv := n.svc, n.client, n.srv

	s := openStream(t, c, &agentv1.AssignmentsRequest{})
	s.next(t) // synced
	svc.Stop()
	select {
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open 5 s after Stop")
	case <-drained(s):
	}
	if connect.CodeOf(s.err) != connect.CodeUnavailable {
		t.Fatalf("stream ended with %v, want UNAVAILABLE", s.err)
	}
	srv.Config.Shutdown(context.Background()) // returns: nothing is left open
	for _, seen := range rec.all() {
		if !seen.Connected {
			t.Fatalf("a stream-closed sighting was recorded on Stop: %+v", seen)
		}
	}
	if len(rec.all()) != 1 {
		t.Fatalf("%d sightings, want the stream's opening only", len(rec.all()))
	}
}

// drained is closed when the stream's messages are read to the end.
func drained(s *stream) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range s.msgs {
		}
		close(done)
	}()
	return done
}
