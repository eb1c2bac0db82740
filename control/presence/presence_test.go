package presence_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lookout/control/controltest"
	"lookout/control/presence"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/metrics"
)

// clock is a test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// counting counts the commands applied through it; fail makes the next
// one fail.
type counting struct {
	*controltest.Cluster
	mu    sync.Mutex
	n     int
	fail  bool
	types []string
}

func (c *counting) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	c.mu.Lock()
	fail := c.fail
	c.fail = false
	c.n++
	c.mu.Unlock()
	if fail {
		return nil, errors.New("no leader")
	}
	return c.Cluster.Apply(ctx, cmd)
}

func (c *counting) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.n }

func newStore(t *testing.T) (*state.Store, *clock, *counting) {
	t.Helper()
	st := controltest.OpenStore(t)
	clk := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	return st, clk, &counting{Cluster: controltest.NewCluster(st, clk.Now)}
}

func TestRecorderThrottles(t *testing.T) {
	st, clk, c := newStore(t)
	r := presence.NewRecorder(presence.RecorderOptions{Cluster: c, MinInterval: 10 * time.Second, Now: clk.Now})
	ctx := context.Background()
	s := presence.Seen{AgentID: "ag", Region: "eu", Name: "edge", Connected: true, BufferedEvents: 3}
	step := func(what string, s presence.Seen, wantWrites int) {
		t.Helper()
		if err := r.Seen(ctx, s); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := c.count(); got != wantWrites {
			t.Fatalf("%s: %d writes, want %d", what, got, wantWrites)
		}
	}
	step("first heartbeat", s, 1)
	clk.Advance(5 * time.Second)
	step("same state", s, 1)
	s.BufferedEvents = 7
	step("another non-empty buffer", s, 1)
	s.BufferedEvents = 0
	step("buffer drained", s, 2)
	clk.Advance(9 * time.Second)
	step("same state", s, 2)
	clk.Advance(time.Second)
	step("10 s later", s, 3)
	s.BufferedEvents = 2
	step("a buffer that fills waits", s, 3)
	s.Connected = false
	step("stream closed", s, 4)
	s.Connected = true
	c.mu.Lock()
	c.fail = true
	c.mu.Unlock()
	if err := r.Seen(ctx, s); err == nil {
		t.Fatal("a failed write was not reported")
	}
	step("after a failed write", s, 6)
	agents, err := st.Agents()
	if err != nil || len(agents) != 1 || !agents[0].GetConnected() || agents[0].GetLastSeenUnixMs() != clk.Now().UnixMilli() {
		t.Fatalf("agents %v %v", agents, err)
	}
	if err := r.Seen(ctx, presence.Seen{AgentID: "ag"}); err == nil {
		t.Fatal("a heartbeat without region was accepted")
	}
}

// TestNewLeaderWaitsOfflineAfter: an agent last seen long ago does not
// make a new leader declare its region offline before the leader itself
// has waited OfflineAfter; the region's monitors are held meanwhile.
func TestNewLeaderWaitsOfflineAfter(t *testing.T) {
	st, clk, c := newStore(t)
	ctx := context.Background()
	presence.NewRecorder(presence.RecorderOptions{Cluster: c, Now: clk.Now}).Seen(ctx, presence.Seen{AgentID: "ag", Region: "eu", Connected: true})
	clk.Advance(10 * time.Minute)
	w := presence.NewWatcher(presence.WatcherOptions{Cluster: c, State: st, OfflineAfter: time.Minute, Now: clk.Now})
	w.Refresh(ctx)
	if off, _ := st.RegionOffline("eu"); off || !w.Held("eu") || w.Held("us") {
		t.Fatalf("offline %v, held eu %v, us %v", off, w.Held("eu"), w.Held("us"))
	}
	clk.Advance(time.Minute - time.Millisecond)
	w.Refresh(ctx)
	if off, _ := st.RegionOffline("eu"); off {
		t.Fatal("offline before the leader waited OfflineAfter")
	}
	clk.Advance(time.Millisecond)
	w.Refresh(ctx)
	if off, _ := st.RegionOffline("eu"); !off {
		t.Fatal("not offline after OfflineAfter")
	}
}

// TestDrainingRegionStaysHeld: a connected agent with a few events in its
// buffer holds nothing; but one returning with buffered events holds its
// region's monitors and does not bring an offline region back;
// once its buffer is empty the region is back and no longer held.
func TestDrainingRegionStaysHeld(t *testing.T) {
	st, clk, c := newStore(t)
	ctx := context.Background()
	r := presence.NewRecorder(presence.RecorderOptions{Cluster: c, Now: clk.Now})
	reg := prometheus.NewRegistry()
	met := metrics.NewControl(reg).Agents
	w := presence.NewWatcher(presence.WatcherOptions{Cluster: c, State: st, OfflineAfter: time.Minute, Now: clk.Now, Metrics: met})
	r.Seen(ctx, presence.Seen{AgentID: "ag", Region: "eu", Connected: true, BufferedEvents: 4})
	r.Seen(ctx, presence.Seen{AgentID: "ag2", Region: "eu", Connected: true})
	r.Seen(ctx, presence.Seen{AgentID: "ag3", Region: "us", Connected: false})
	w.Refresh(ctx)
	if w.Held("eu") {
		t.Fatal("held with a connected, busy agent")
	}
	if got := connected(t, reg); len(got) != 2 || got["eu"] != 2 || got["us"] != 0 {
		t.Fatalf("agents connected %v", got)
	}
	r.Seen(ctx, presence.Seen{AgentID: "ag2", Region: "eu", Connected: false})
	r.Seen(ctx, presence.Seen{AgentID: "ag", Region: "eu", Connected: false})
	clk.Advance(time.Minute)
	w.Refresh(ctx)
	if off, _ := st.RegionOffline("eu"); !off || !w.Held("eu") {
		t.Fatalf("offline %v held %v", off, w.Held("eu"))
	}
	select {
	case <-w.HeldChanged():
	default:
		t.Fatal("no change signalled")
	}
	r.Seen(ctx, presence.Seen{AgentID: "ag", Region: "eu", Connected: true, BufferedEvents: 5})
	w.Refresh(ctx)
	if off, _ := st.RegionOffline("eu"); !off || !w.Held("eu") {
		t.Fatalf("draining: offline %v held %v", off, w.Held("eu"))
	}
	r.Seen(ctx, presence.Seen{AgentID: "ag", Region: "eu", Connected: true})
	w.Refresh(ctx)
	if off, _ := st.RegionOffline("eu"); off {
		t.Fatal("still offline after the buffer drained")
	}
	w.Refresh(ctx)
	if w.Held("eu") {
		t.Fatal("held after the region is back")
	}
}

// connected is lookout_agents_connected by region.
func connected(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "lookout_agents_connected" {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}
