package agent_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lookout/agent"
	"lookout/agent/agenttest"
	"lookout/agent/assign"
	"lookout/agent/link"
	"lookout/agent/region"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

type parts struct {
	a     *agent.Agent
	pool  *region.Pool
	store *assign.Store
	buf   *agenttest.Buffer
	link  *link.Client
	reg   *prometheus.Registry
	stop  func()
}

// startAgent composes an agent of region eu-1 on dir, as `lookout agent`
// does, with the in-memory buffer, and no gossip address.
func startAgent(t *testing.T, dir string, urls ...string) *parts {
	t.Helper()
	return startGossiping(t, dir, region.Options{}, urls...)
}

// startGossiping is startAgent with the pool's gossip address and joins
// of ro.
func startGossiping(t *testing.T, dir string, ro region.Options, urls ...string) *parts {
	t.Helper()
	id, err := agent.LoadID(dir)
	if err != nil {
		t.Fatal(err)
	}
	ident := &agentv1.AgentIdentity{Id: id, Name: "edge-1", Version: "test"}
	l, err := link.New(link.Options{URLs: urls, Token: "at_ok", Agent: ident, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ro.ID, ro.Name = id, "edge-1"
	pool, err := region.New(ro)
	if err != nil {
		t.Fatal(err)
	}
	p := &parts{store: st, pool: pool, buf: agenttest.NewBuffer(), link: l, reg: prometheus.NewRegistry()}
	p.a = agent.New(agent.Options{
		Name: "edge-1", Version: "test", Region: "eu-1", Link: l, Store: st, Pool: pool, Buffer: p.buf, Registry: p.reg,
		RetryDelays: []time.Duration{10 * time.Millisecond}, HeartbeatEvery: 50 * time.Millisecond, ForwardPoll: 10 * time.Millisecond,
		Backoff: link.Backoff{Min: 10 * time.Millisecond, Max: 100 * time.Millisecond},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.a.Run(ctx) }()
	stopped := false
	p.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
		pool.Close()
		l.CloseIdle()
	}
	t.Cleanup(p.stop)
	return p
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAgentEndToEnd: a check assigned by the control plane runs on the
// agent within 5 s and its verdict reaches the control plane; heartbeats
// and metrics tell the state; after a restart with the control plane
// down, the agent holds its check and key from disk and keeps its id.
func TestAgentEndToEnd(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer target.Close()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutKey(&agentv1.IngestKey{Id: "k1", Hash: []byte("hash-1"), AccountId: "acc1"})
	dir := t.TempDir()
	p := startAgent(t, dir, cp.URL())

	added := time.Now()
	cp.PutCheck(&agentv1.Check{Id: "c1", AccountId: "acc1", Name: "site", Kind: "http_check", Schedule: "1h",
		Config: &raftv1.CheckConfig{Url: target.URL, Timeout: 5}})
	eventually(t, "the verdict at the control plane", func() bool { return len(cp.Executions()) == 1 })
	if d := time.Since(added); d > 5*time.Second {
		t.Fatalf("a new check's first verdict took %s", d)
	}
	ex := cp.Executions()[0]
	if ex.GetStatus() != "success" || ex.GetCheckUuid() != "c1" || ex.GetRegion() != "eu-1" || ex.GetAgent() != "edge-1" {
		t.Fatalf("execution %v", ex)
	}
	eventually(t, "a heartbeat", func() bool { return len(cp.Heartbeats()) > 0 })
	hb := cp.Heartbeats()[len(cp.Heartbeats())-1]
	if len(hb.GetMembers()) != 1 {
		t.Fatalf("heartbeat %v", hb)
	}
	if _, ok := p.store.KeyByHash([]byte("hash-1")); !ok {
		t.Fatal("the key is not accepted")
	}
	eventually(t, "the buffer drained", func() bool { return p.buf.Stats().Results == 0 })
	m, err := testutil.GatherAndCount(p.reg)
	if err != nil || m == 0 {
		t.Fatalf("metrics: %d, %v", m, err)
	}
	want := `
# HELP lookout_agent_forwarded_total Buffered items the control plane stored (a repeat it had stored counts too), by kind (event, result).
# TYPE lookout_agent_forwarded_total counter
lookout_agent_forwarded_total{kind="event"} 0
lookout_agent_forwarded_total{kind="result"} 1
`
	if err := testutil.GatherAndCompare(p.reg, strings.NewReader(want), "lookout_agent_forwarded_total"); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"lookout_agent_link_state": 1, "lookout_agent_assignments": 2, "lookout_agent_region_members": 1} {
		if got := sum(t, p.reg, name); got != v {
			t.Errorf("%s sums to %v, want %v", name, got, v)
		}
	}
	id := mustID(t, dir)
	p.stop()
	cp.Close()

	// Restart, cut off.
	p2 := startAgent(t, dir, cp.URL())
	if c := p2.store.Checks(); len(c) != 1 || c[0].GetId() != "c1" {
		t.Fatalf("after a restart the agent holds %v", c)
	}
	if _, ok := p2.store.KeyByHash([]byte("hash-1")); !ok {
		t.Fatal("after a restart the key is not accepted")
	}
	if mustID(t, dir) != id {
		t.Fatal("the agent id changed")
	}
	eventually(t, "the link down", func() bool { return p2.link.State() == link.Disconnected })
}

func mustID(t *testing.T, dir string) string {
	id, err := agent.LoadID(dir)
	if err != nil || !strings.HasPrefix(id, "ag_") {
		t.Fatalf("id %q, %v", id, err)
	}
	return id
}

// sum adds up the samples of a metric family.
func sum(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			total += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return total
}

// TestRefusedIdentityStops: an agent whose identity the control plane
// refuses as malformed (INVALID_ARGUMENT) stops with an error that says
// so, after one try, instead of asking again every few seconds.
func TestRefusedIdentityStops(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp2 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	dir := t.TempDir()
	l, err := link.New(link.Options{URLs: []string{cp.URL(), cp2.URL()}, Token: "at_ok",
		Agent: &agentv1.AgentIdentity{Id: "garbage id\x01", Name: "edge-1"}, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.CloseIdle()
	st, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := region.New(region.Options{ID: "ag_1", Name: "edge-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	a := agent.New(agent.Options{
		Name: "edge-1", Version: "test", Region: "eu-1", Link: l, Store: st, Pool: pool, Buffer: agenttest.NewBuffer(),
		HeartbeatEvery: 50 * time.Millisecond, ForwardPoll: 10 * time.Millisecond,
		Backoff: link.Backoff{Min: 10 * time.Millisecond, Max: 100 * time.Millisecond},
	})
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not stop")
	}
	if !errors.Is(err, assign.ErrIdentityRefused) || !strings.Contains(err.Error(), "agent id") {
		t.Fatalf("Run = %v", err)
	}
	if n := cp.Calls("Assignments") + cp2.Calls("Assignments"); n != 1 {
		t.Fatalf("%d assignment calls, want 1 (no retry, no failover)", n)
	}
}
