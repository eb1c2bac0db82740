package agentrpc_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"

	"lookout/control/agentrpc"
	"lookout/control/controltest"
	"lookout/control/state"
	"lookout/internal/apikey"
	"lookout/internal/gen/lookout/agent/v1/agentv1connect"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// oneNode is the agent RPC of one in-process state behind httptest (no
// raft: controltest applies commands directly), with an agent token of
// region and a client that carries it.
type oneNode struct {
	st     *state.Store
	svc    *agentrpc.Service
	client agentv1connect.AgentServiceClient
	srv    *httptest.Server
	apply  func(*raftv1.Command)
}

// newOneNode serves o (its State and Writer filled in when unset: the
// store, the in-process cluster); wrap, if set, wraps the store given to
// the service.
func newOneNode(t *testing.T, o agentrpc.Options, wrap func(*state.Store) agentrpc.State) *oneNode {
	t.Helper()
	st := controltest.OpenStore(t)
	cluster := controltest.NewCluster(st, time.Now)
	n := &oneNode{st: st, apply: func(cmd *raftv1.Command) { cluster.MustApply(t, cmd) }}
	token, hash, _ := apikey.New(apikey.Agent)
	n.apply(&raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: &raftv1.CreateAgentToken{Id: "t", Region: region, Name: "t", Hash: hash}}})
	o.State, o.Writer = st, cluster
	if wrap != nil {
		o.State = wrap(st)
	}
	n.svc = agentrpc.New(o)
	path, h := n.svc.Handler()
	mux := http.NewServeMux()
	mux.Handle(path, h)
	n.srv = httptest.NewServer(mux)
	t.Cleanup(n.srv.Close) // after the streams are cancelled
	n.client = agentv1connect.NewAgentServiceClient(n.srv.Client(), n.srv.URL, connect.WithInterceptors(bearer(token)))
	return n
}
