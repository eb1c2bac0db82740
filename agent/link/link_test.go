package link_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"lookout/agent/agenttest"
	"lookout/agent/link"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/tlsconf/tlstest"
)

// deadURL is the URL of a loopback port nobody listens on.
func deadURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

func newClient(t *testing.T, token string, urls ...string) *link.Client {
	t.Helper()
	c, err := link.New(link.Options{URLs: urls, Token: token, Agent: &agentv1.AgentIdentity{Id: "ag_1", Name: "edge-1"}, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

// TestFailover: a call goes to the next URL when one is down, the URL
// that worked is tried first afterwards, and when it goes down too the
// call moves on again.
func TestFailover(t *testing.T) {
	ctx := context.Background()
	cp1 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp2 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	c := newClient(t, "at_ok", deadURL(t), cp1.URL(), cp2.URL())
	if c.State() != link.Disconnected {
		t.Fatalf("state before any call = %v", c.State())
	}
	if _, err := c.Heartbeat(ctx, &agentv1.HeartbeatRequest{}); err != nil {
		t.Fatalf("heartbeat with a dead first URL: %v", err)
	}
	if c.URL() != cp1.URL() || c.State() != link.Connected {
		t.Fatalf("after the call: url %s state %v, want %s connected", c.URL(), c.State(), cp1.URL())
	}
	if _, err := c.Heartbeat(ctx, &agentv1.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	if n := cp1.Calls("Heartbeat"); n != 2 {
		t.Fatalf("cp1 answered %d heartbeats, want 2 (the URL that worked is tried first)", n)
	}
	hb := cp1.Heartbeats()[0]
	if hb.GetAgent().GetId() != "ag_1" || hb.GetAgent().GetName() != "edge-1" {
		t.Fatalf("the heartbeat named %v", hb.GetAgent())
	}
	cp1.Close()
	if _, err := c.Heartbeat(ctx, &agentv1.HeartbeatRequest{}); err != nil {
		t.Fatalf("heartbeat after cp1 closed: %v", err)
	}
	if c.URL() != cp2.URL() || cp2.Calls("Heartbeat") != 1 {
		t.Fatalf("after cp1 closed: url %s, cp2 calls %d", c.URL(), cp2.Calls("Heartbeat"))
	}
	cp2.Close()
	_, err := c.Heartbeat(ctx, &agentv1.HeartbeatRequest{})
	if err == nil || link.IsUnauthenticated(err) || c.State() != link.Disconnected {
		t.Fatalf("every URL down: err %v, state %v", err, c.State())
	}
}

// TestUnauthenticated: a refused token is reported as such, changes the
// state, and is not tried on the other URLs (every node shares the
// tokens); a valid token works again.
func TestUnauthenticated(t *testing.T) {
	ctx := context.Background()
	cp1 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp2 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	c := newClient(t, "at_ok", cp1.URL(), cp2.URL())
	var states []link.State
	c.OnStateChange(func(s link.State) { states = append(states, s) })
	if _, err := c.Heartbeat(ctx, &agentv1.HeartbeatRequest{}); err != nil {
		t.Fatal(err)
	}
	cp1.Revoke()
	_, err := c.ForwardEvents(ctx, &agentv1.ForwardEventsRequest{})
	if !link.IsUnauthenticated(err) || c.State() != link.Unauthenticated {
		t.Fatalf("revoked: err %v, state %v", err, c.State())
	}
	if cp2.Calls("ForwardEvents") != 0 {
		t.Fatal("a refused token was tried on the next URL")
	}
	cp1.SetToken("at_ok")
	if _, err := c.Heartbeat(ctx, &agentv1.HeartbeatRequest{}); err != nil || c.State() != link.Connected {
		t.Fatalf("token valid again: err %v, state %v", err, c.State())
	}
	want := []link.State{link.Connected, link.Unauthenticated, link.Connected}
	if len(states) != len(want) {
		t.Fatalf("state changes %v, want %v", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Fatalf("state changes %v, want %v", states, want)
		}
	}
}

// TestTLS: an https URL is verified against the given roots, spoken over
// HTTP/2 (the fake refuses anything else), and the client certificate
// is presented; without the roots the call fails.
func TestTLS(t *testing.T) {
	ctx := context.Background()
	cp := agenttest.NewControlPlaneTLS(t, "eu-1", "at_ok")
	ca := tlstest.NewCA(t, "agents")
	files := ca.Node(t, "edge-1")
	cert, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := link.New(link.Options{URLs: []string{cp.URL()}, Token: "at_ok", Agent: &agentv1.AgentIdentity{Id: "ag_1"},
		TLS: &tls.Config{RootCAs: cp.Roots(), Certificates: []tls.Certificate{cert}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	if _, err := c.Heartbeat(ctx, &agentv1.HeartbeatRequest{}); err != nil {
		t.Fatalf("heartbeat over TLS: %v", err)
	}
	if cn := cp.ClientCertCN(); cn != "edge-1" {
		t.Fatalf("client certificate seen: %q", cn)
	}
	untrusting, err := link.New(link.Options{URLs: []string{cp.URL()}, Token: "at_ok"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := untrusting.Heartbeat(ctx, &agentv1.HeartbeatRequest{}); err == nil {
		t.Fatal("a certificate from an unknown CA was accepted")
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "localhost:8080", "http://"} {
		if _, err := link.New(link.Options{URLs: []string{u}, Token: "at_x"}); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
	if _, err := link.New(link.Options{URLs: []string{"http://a:1"}}); err == nil {
		t.Error("no token accepted")
	}
}

// TestBackoff: waits grow from Min to Max, each between half and all of
// its step, and Reset starts again.
func TestBackoff(t *testing.T) {
	b := link.Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	steps := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, s := range steps {
		step := s * time.Millisecond
		if d := b.Next(); d < step/2 || d > step {
			t.Fatalf("wait %d = %s, want within [%s, %s]", i, d, step/2, step)
		}
	}
	b.Reset()
	if d := b.Next(); d > 100*time.Millisecond {
		t.Fatalf("after Reset: %s", d)
	}
}

// TestAssignmentsSkipsHungNode: a node that takes the stream but sends
// nothing is given up on after the call timeout, and the next URL serves.
func TestAssignmentsSkipsHungNode(t *testing.T) {
	hung := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/connect+proto")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	hung.Config.Protocols = new(http.Protocols)
	hung.Config.Protocols.SetHTTP1(true)
	hung.Config.Protocols.SetUnencryptedHTTP2(true)
	hung.Start()
	defer hung.Close()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	c, err := link.New(link.Options{URLs: []string{hung.URL, cp.URL()}, Token: "at_ok", CallTimeout: 300 * time.Millisecond,
		Agent: &agentv1.AgentIdentity{Id: "ag_1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	start := time.Now()
	st, err := c.Assignments(context.Background(), &agentv1.AssignmentsRequest{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("opened after %s: the hung node was not waited on (it did not hang?)", d)
	}
	defer st.Close()
	if !st.Msg().GetSynced() || st.Msg().GetRegion() != "eu-1" || c.URL() != cp.URL() {
		t.Fatalf("first message %v from %s", st.Msg(), c.URL())
	}
}
