package agentrpc_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/http2"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/agentrpc"
	"lookout/control/ingest"
	"lookout/internal/apikey"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/gen/lookout/agent/v1/agentv1connect"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/metrics"
)

const region = "eu-1"

// keepalive is the streams' keepalive in these tests (shorter than the
// default, so that a test sees some).
const keepalive = time.Second

// recorder is a Presence that keeps what it is told.
type recorder struct {
	mu   sync.Mutex
	seen []agentrpc.Seen
}

func (r *recorder) Seen(_ context.Context, s agentrpc.Seen) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s)
	return nil
}

func (r *recorder) all() []agentrpc.Seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agentrpc.Seen(nil), r.seen...)
}

// env is a 3-node cluster serving the Ingest API and the agent RPC, with
// an account (its ingest key) and an agent token of region that serves
// every account. Its nodes share one set of agent metrics, on reg.
type env struct {
	c        *clustertest.Cluster
	presence *recorder
	reg      *prometheus.Registry
	acct     string
	keyID    string
	token    string
	tokenID  string
}

// secret is the cluster secret the test nodes derive gossip keys from.
var secret = []byte("adm_test-cluster-secret")

// gossipKey is a region's gossip key as the nodes hand it out.
func gossipKey(region string) []byte {
	k, err := cluster.RegionGossipKey(secret, region)
	if err != nil {
		panic(err)
	}
	return k
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{presence: &recorder{}, reg: prometheus.NewRegistry()}
	agentMetrics := metrics.NewControl(e.reg).Agents
	e.c = clustertest.NewCluster(t, 3, clustertest.Options{
		Serve: func(n *cluster.Node, mux *http.ServeMux) func() {
			api := ingest.New(ingest.Options{Health: n, Cluster: n, State: clustertest.StateOf(n), RetentionCount: 1000, RetentionAge: 24 * time.Hour})
			api.Start()
			path, h := agentrpc.New(agentrpc.Options{
				State: clustertest.StateOf(n), Writer: n, Events: api, Presence: e.presence, NodeID: n.ID(),
				GossipKey: gossipKey, Metrics: agentMetrics, Keepalive: keepalive,
			}).Handler()
			mux.Handle(path, h)
			return api.Stop
		},
	})
	e.acct, e.keyID = e.newAccount(t)
	e.token, e.tokenID = e.newToken(t, region)
	return e
}

// newAccount creates an account (its ingest key with id keyID) on the
// leader.
func (e *env) newAccount(t *testing.T) (acct, keyID string) {
	t.Helper()
	acct, keyID = uuid.NewString(), uuid.NewString()
	_, hash, _ := apikey.New(apikey.Ingest)
	_, mkHash, _ := apikey.New(apikey.Management)
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: acct + "@example.com",
		Plan:          &raftv1.Plan{Name: "default", ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20},
		IngestKey:     &raftv1.Key{Id: keyID, AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "default", Hash: hash},
		ManagementKey: &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "personal", Hash: mkHash},
	}}})
	return acct, keyID
}

// newToken creates an agent token of region on the leader, serving
// accounts (none: every account).
func (e *env) newToken(t *testing.T, region string, accounts ...string) (token, id string) {
	t.Helper()
	token, hash, err := apikey.New(apikey.Agent)
	if err != nil {
		t.Fatal(err)
	}
	id = uuid.NewString()
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_CreateAgentToken{CreateAgentToken: &raftv1.CreateAgentToken{
		Id: id, Region: region, Name: "agents of " + region, Hash: hash, Accounts: accounts}}})
	return token, id
}

// refused is the count of lookout_agents_refused_total{kind, reason}.
func (e *env) refused(t *testing.T, kind, reason string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lookout_agents_refused_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == kind && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// apply applies cmd on the leader and requires OK.
func (e *env) apply(t *testing.T, cmd *raftv1.Command) {
	t.Helper()
	res, err := e.c.Leader(10*time.Second).Apply(clustertest.Context(t, 10*time.Second), cmd)
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("apply %T: %v %v", cmd.GetOp(), res, err)
	}
}

// putCheck creates or replaces an http_check of the account.
func (e *env) putCheck(t *testing.T, id string, enabled, create bool, regions ...string) {
	t.Helper()
	e.putCheckOf(t, e.acct, id, enabled, create, regions...)
}

// putCheckOf creates or replaces an http_check of account acct.
func (e *env) putCheckOf(t *testing.T, acct, id string, enabled, create bool, regions ...string) {
	t.Helper()
	spec := &raftv1.MonitorSpec{Uuid: id, Kind: "http_check", Name: "site-" + id[:8], Enabled: enabled, Schedule: "1m", Regions: regions,
		Config: &raftv1.CheckConfig{Url: "https://example.com/" + id, Method: "GET", Timeout: 10}}
	op := &raftv1.PutMonitors{AccountId: acct}
	if create {
		op.Creates = []*raftv1.MonitorSpec{spec}
	} else {
		op.Updates = []*raftv1.MonitorSpec{spec}
	}
	e.apply(t, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: op}})
}

// h2c is an HTTP/2 cleartext client, as agents use.
var h2c = &http.Client{Transport: &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}}}

// client is an agent RPC client of node n with token.
func client(n *clustertest.Node, token string) agentv1connect.AgentServiceClient {
	return agentv1connect.NewAgentServiceClient(h2c, n.URL(), connect.WithInterceptors(bearer(token)))
}

// bearer adds the agent token to every call.
type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// stream is an open Assignments stream whose messages arrive on msgs; err
// holds how it ended once msgs is closed.
type stream struct {
	msgs   chan *agentv1.AssignmentsResponse
	err    error
	cancel context.CancelFunc
}

func openStream(t *testing.T, c agentv1connect.AgentServiceClient, req *agentv1.AssignmentsRequest) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if req.Agent == nil {
		req.Agent = testAgent
	}
	st, err := c.Assignments(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{msgs: make(chan *agentv1.AssignmentsResponse, 100), cancel: cancel}
	go func() {
		defer close(s.msgs)
		for st.Receive() {
			s.msgs <- st.Msg()
		}
		s.err = st.Err()
	}()
	return s
}

// testAgent is the identity of a test's agent.
var testAgent = &agentv1.AgentIdentity{Id: "ag_test", Name: "test", Version: "test"}

// next returns the stream's next message that is not a keepalive.
func (s *stream) next(t *testing.T) *agentv1.AssignmentsResponse {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				t.Fatalf("stream ended: %v", s.err)
			}
			if len(m.GetChecks())+len(m.GetRemovedChecks())+len(m.GetKeys())+len(m.GetRemovedKeys()) > 0 || m.GetSynced() {
				return m
			}
		case <-timeout:
			t.Fatal("no message within 10 s")
		}
	}
}

// initial reads the initial difference up to the synced message.
func (s *stream) initial(t *testing.T) (checks map[string]*agentv1.Check, keys map[string]*agentv1.IngestKey, removed []string) {
	t.Helper()
	checks, keys = map[string]*agentv1.Check{}, map[string]*agentv1.IngestKey{}
	for {
		m := s.next(t)
		if m.GetRegion() != region {
			t.Fatalf("initial message with region %q", m.GetRegion())
		}
		for _, c := range m.GetChecks() {
			checks[c.GetId()] = c
		}
		for _, k := range m.GetKeys() {
			keys[k.GetId()] = k
		}
		removed = append(removed, m.GetRemovedChecks()...)
		removed = append(removed, m.GetRemovedKeys()...)
		if m.GetSynced() {
			return checks, keys, removed
		}
	}
}
