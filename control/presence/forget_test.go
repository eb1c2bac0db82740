package presence_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lookout/control/presence"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/metrics"
)

// TestForgetAfter: an agent not seen for ForgetAfter (the leader's clock,
// stamped into the commands) is forgotten, and its offline region with it:
// the region is no longer offline, held, listed or in the metrics, and
// later passes raise no alert and propose nothing. An agent that keeps
// reporting stays; nothing is forgotten before the leader has been in
// office for OfflineAfter.
func TestForgetAfter(t *testing.T) {
	st, clk, c := newStore(t)
	ctx := context.Background()
	r := presence.NewRecorder(presence.RecorderOptions{Cluster: c, Now: clk.Now})
	reg := prometheus.NewRegistry()
	w := presence.NewWatcher(presence.WatcherOptions{Cluster: c, State: st, OfflineAfter: time.Minute, ForgetAfter: time.Hour,
		Now: clk.Now, Metrics: metrics.NewControl(reg).Agents})
	r.Seen(ctx, presence.Seen{AgentID: "gone", Region: "eu", Connected: true})
	clk.Advance(2 * time.Minute)
	r.Seen(ctx, presence.Seen{AgentID: "live", Region: "us", Connected: true})
	w.Refresh(ctx)
	if off, _ := st.RegionOffline("eu"); !off || !w.Held("eu") {
		t.Fatalf("eu offline %v, held %v", off, w.Held("eu"))
	}
	for range 6 { // an hour of the live agent's reports
		clk.Advance(10 * time.Minute)
		r.Seen(ctx, presence.Seen{AgentID: "live", Region: "us", Connected: true})
	}
	pending, _ := st.PendingAlerts(0)
	w.Refresh(ctx)
	agents, _ := st.Agents()
	if len(agents) != 1 || agents[0].GetId() != "live" {
		t.Fatalf("agents %v", agents)
	}
	regions, _ := st.Regions()
	if off, _ := st.RegionOffline("eu"); off || w.Held("eu") || len(regions) != 0 {
		t.Fatalf("eu offline %v, held %v, regions %v", off, w.Held("eu"), regions)
	}
	if got := connected(t, reg); len(got) != 1 || got["us"] != 1 {
		t.Fatalf("agents connected %v", got)
	}
	n := c.count()
	clk.Advance(time.Hour)
	r.Seen(ctx, presence.Seen{AgentID: "live", Region: "us", Connected: true})
	w.Refresh(ctx)
	if after, _ := st.PendingAlerts(0); len(after) != len(pending) {
		t.Fatalf("alerts %d, want %d", len(after), len(pending))
	}
	if c.count() != n+1 { // the live agent's record, nothing else
		t.Fatalf("%d commands, want %d", c.count(), n+1)
	}

	// A new leader waits OfflineAfter before it forgets.
	clk.Advance(2 * time.Hour)
	w2 := presence.NewWatcher(presence.WatcherOptions{Cluster: c, State: st, OfflineAfter: time.Minute, ForgetAfter: time.Hour, Now: clk.Now})
	w2.Refresh(ctx)
	if agents, _ := st.Agents(); len(agents) != 1 {
		t.Fatalf("a new leader forgot at once: %v", agents)
	}
	clk.Advance(time.Minute)
	w2.Refresh(ctx)
	if agents, _ := st.Agents(); len(agents) != 0 {
		t.Fatalf("agents %v", agents)
	}
}

// TestForgottenRegionNotJudged: the operator forgets the only agent of a
// region (ForgetAgents, as DELETE /admin/v1/agents/{id}) before the region
// went offline: the region never goes offline, raises no alert and holds
// no monitor.
func TestForgottenRegionNotJudged(t *testing.T) {
	st, clk, c := newStore(t)
	ctx := context.Background()
	r := presence.NewRecorder(presence.RecorderOptions{Cluster: c, Now: clk.Now})
	w := presence.NewWatcher(presence.WatcherOptions{Cluster: c, State: st, OfflineAfter: time.Minute, Now: clk.Now})
	r.Seen(ctx, presence.Seen{AgentID: "retired", Region: "eu", Connected: true})
	w.Refresh(ctx)
	if _, err := c.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_ForgetAgents{ForgetAgents: &raftv1.ForgetAgents{AgentIds: []string{"retired"}}}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		clk.Advance(5 * time.Minute)
		w.Refresh(ctx)
	}
	regions, _ := st.Regions()
	pending, _ := st.PendingAlerts(0)
	if off, _ := st.RegionOffline("eu"); off || w.Held("eu") || len(regions) != 0 || len(pending) != 0 {
		t.Fatalf("offline %v, held %v, regions %v, alerts %d", off, w.Held("eu"), regions, len(pending))
	}
}

// TestRecorderCap: the recorder remembers at most MaxTracked agents (their
// ids are the agents' to choose); beyond, a new agent's heartbeats are
// written unthrottled and counted, and the remembered ones stay
// throttled. Agents not written for a while are swept.
func TestRecorderCap(t *testing.T) {
	_, clk, c := newStore(t)
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	met := metrics.NewControl(reg).Agents
	r := presence.NewRecorder(presence.RecorderOptions{Cluster: c, Now: clk.Now, MaxTracked: 3, Metrics: met})
	seen := func(id string) {
		t.Helper()
		if err := r.Seen(ctx, presence.Seen{AgentID: id, Region: "eu", Connected: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b", "c"} {
		seen(id)
	}
	n := c.count()
	seen("a") // remembered: throttled
	if c.count() != n {
		t.Fatal("a remembered agent was written again at once")
	}
	seen("d")
	seen("d") // not remembered: written each time
	if c.count() != n+2 {
		t.Fatalf("%d writes, want %d", c.count()-n, 2)
	}
	gather := func(name string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				m := mf.GetMetric()[0]
				return m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		return -1
	}
	if got := gather("lookout_agents_recorder_tracked"); got != 3 {
		t.Fatalf("tracked %v", got)
	}
	if got := gather("lookout_agents_recorder_untracked_total"); got != 2 {
		t.Fatalf("untracked %v", got)
	}
	// Much later, the silent ones are swept and d is remembered.
	clk.Advance(time.Hour)
	seen("d")
	n = c.count()
	seen("d")
	if c.count() != n {
		t.Fatal("d is not remembered after the sweep")
	}
}
