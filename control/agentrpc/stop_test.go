package agentrpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"

	"lookout/control/agentrpc"
	"lookout/control/controltest"
	"lookout/control/state"
	"lookout/internal/apikey"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/gen/lookout/agent/v1/agentv1connect"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestStopEndsStreams: a node shutting down ends its assignment streams
// UNAVAILABLE at once (its agents go to another node) instead of making
// the HTTP server's Shutdown wait for them, and records no "stream closed"
// sighting that could land after the agent's reconnect elsewhere.
func TestStopEndsStreams(t *testing.T) {
	st, err := state.Open(state.Options{Dir: t.TempDir(), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cluster := controltest.NewCluster(st, time.Now)
	token, hash, _ := apikey.New(apikey.Agent)
	cmd := &raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: &raftv1.CreateAgentToken{Id: "t", Region: region, Name: "t", Hash: hash}}}
	if res, err := cluster.Apply(context.Background(), cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("apply: %v %v", res, err)
	}
	rec := &recorder{}
	svc := agentrpc.New(agentrpc.Options{State: st, Writer: cluster, Presence: rec})
	path, h := svc.Handler()
	mux := http.NewServeMux()
	mux.Handle(path, h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := agentv1connect.NewAgentServiceClient(srv.Client(), srv.URL, connect.WithInterceptors(bearer(token)))

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
