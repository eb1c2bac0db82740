package e2e

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/gen/lookout/agent/v1/agentv1connect"
	"lookout/internal/tlsconf"
	"lookout/internal/tlsconf/tlstest"
)

// TestAgentRPCOverTLS runs lookout control --dev over HTTPS: an agent token
// made with `lookout admin agent-token create` opens the agent RPC on the
// node's one listener (HTTP/2 over TLS, verified against the CA), the
// assignment stream says the token's region, and after `lookout admin
// agent-token revoke` the token is refused.
func TestAgentRPCOverTLS(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "e2e CA")
	files := ca.Node(t, "node")
	p := start(t, "agentrpc", "control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0", "--raft-addr", "127.0.0.1:0", "--log-level", "warn",
		"--tls-cert", files.Cert, "--tls-key", files.Key)
	out := p.waitStdout("Next:", 30*time.Second)
	base := match(t, out, `is up at (https://[0-9.:]+)`)
	adminToken := match(t, out, `admin token:\s+(adm_[a-z0-9]+)`)
	admin := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(binary, append(append([]string{"admin"}, args...), "--addr", base, "--admin-token", adminToken, "--ca-file", ca.File)...)
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("lookout admin %v: %v", args, err)
		}
		return b
	}
	var tok struct{ ID, Token string }
	if err := json.Unmarshal(admin("agent-token", "create", "--region", "eu-1", "--name", "factory"), &tok); err != nil {
		t.Fatal(err)
	}

	pool, err := tlsconf.LoadPool(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := agentv1connect.NewAgentServiceClient(&http.Client{Transport: tr}, base, connect.WithGRPC())
	call := func(token string) error {
		req := connect.NewRequest(&agentv1.HeartbeatRequest{Agent: &agentv1.AgentIdentity{Id: "a1", Name: "e2e"}})
		req.Header().Set("Authorization", "Bearer "+token)
		_, err := client.Heartbeat(ctxT(t, 10*time.Second), req)
		return err
	}
	if err := call(tok.Token); err != nil {
		t.Fatalf("heartbeat with a new token: %v", err)
	}
	req := connect.NewRequest(&agentv1.AssignmentsRequest{Agent: &agentv1.AgentIdentity{Id: "a1", Name: "e2e"}})
	req.Header().Set("Authorization", "Bearer "+tok.Token)
	stream, err := client.Assignments(ctxT(t, 10*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	if !stream.Receive() {
		t.Fatalf("no first message: %v", stream.Err())
	}
	if m := stream.Msg(); m.GetRegion() != "eu-1" || !m.GetSynced() || len(m.GetKeys()) != 1 {
		t.Fatalf("first message %v: want region eu-1, synced, the dev account's ingest key", m)
	}
	stream.Close()

	admin("agent-token", "revoke", tok.ID)
	if err := call(tok.Token); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("heartbeat after revocation: %v, want unauthenticated", err)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
}
