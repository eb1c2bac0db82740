package presence_test

import (
	"testing"
	"time"

	"lookout/control/presence"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestRegionOfflineAndBack runs the whole story on 3 real nodes with a
// real webhook receiver: the only agent of region eu stops heartbeating;
// the region goes offline and each account with monitors there gets one
// agent.offline, while the region's ping monitors, whose deadlines pass
// meanwhile, alert nothing (an agent-less monitor's deadline does fire).
// The leader is killed while the region is offline: the new leader sends
// no second agent.offline. The agent returns with a buffered ping for two
// of the monitors (in time); once its buffer is drained each account gets
// one agent.online, and only the monitor whose run was really missed
// alerts, once.
func TestRegionOfflineAndBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, aKey := f.account("a@example.com")
	b, bKey := f.account("b@example.com")
	c, _ := f.account("c@example.com") // no monitors in eu: no region alert
	f.pingMonitors(a, "missed", "ontime", "local")
	f.pingMonitors(b, "b-job")
	f.pingMonitors(c, "c-job")
	f.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: a, Creates: []*raftv1.MonitorSpec{{
		Uuid: "c0000000-0000-4000-8000-000000000001", Kind: "http_check", Name: "site", Enabled: true, Schedule: "1m", Regions: []string{"eu"},
		Config: &raftv1.CheckConfig{Url: "https://example.com/", Method: "GET", Timeout: 10},
	}}}}})

	// The agent of eu heartbeats through a follower; pings came through it
	// 50 s ago, so every monitor's missed deadline is about 10 s away.
	agentSeen := presence.Seen{AgentID: "agent-1", Region: "eu", Name: "edge-1", Version: "test", TokenID: "tok", Connected: true}
	stop := f.agent(f.c.Follower().Node, agentSeen)
	start := time.Now()
	first := start.Add(-50 * time.Second)
	f.ingest(ping(a, aKey, "missed", "eu", first), ping(a, aKey, "ontime", "eu", first), ping(b, bKey, "b-job", "eu", first),
		ping(a, aKey, "local", "", first), ping(c, "", "c-job", "", first.Add(time.Hour)))
	time.Sleep(500 * time.Millisecond)

	// Cut off: no more heartbeats.
	stop()
	f.waitFor("region eu offline", 20*time.Second, func() bool { return f.regionOffline("eu") })
	t.Logf("eu offline %s after the last heartbeat", time.Since(start).Round(10*time.Millisecond))
	f.waitFor("one agent.offline per account", 20*time.Second, func() bool {
		d := f.hook.distinct()
		return d[key(a, "agent.offline", "eu")] == 1 && d[key(b, "agent.offline", "eu")] == 1
	})
	for _, h := range f.hook.regionHooks() {
		want := map[string]int64{a: 3, b: 1}[h.Account.ID]
		if h.Region.Name != "eu" || h.Region.Monitors != want || h.Monitor.Kind != "region" {
			t.Errorf("agent alert %+v (region %+v), want %d monitors", h, *h.Region, want)
		}
	}

	// A leader change while eu is offline.
	old := f.c.Leader(20 * time.Second)
	f.c.Kill(old.Index)
	leader := f.c.Leader(20 * time.Second)
	t.Logf("killed leader %d; node %d leads", old.Index, leader.Index)

	// The monitors' deadlines pass (and the new leader's term is longer
	// than offlineAfter): the agent-less one alerts, those of eu do not.
	f.waitFor("the agent-less monitor's missed alert", 30*time.Second, func() bool {
		return f.hook.distinct()[key(a, "monitor.missed", "local")] == 1
	})
	time.Sleep(time.Until(first.Add(60*time.Second + offlineAfter + time.Second)))
	got := f.hook.distinct()
	for _, k := range []string{key(a, "monitor.missed", "missed"), key(a, "monitor.missed", "ontime"), key(b, "monitor.missed", "b-job")} {
		if got[k] != 0 {
			t.Errorf("%s while the region was offline", k)
		}
	}
	if got[key(a, "agent.offline", "eu")] != 1 || got[key(b, "agent.offline", "eu")] != 1 || len(f.hook.regionHooks()) != 2 {
		t.Fatalf("agent alerts after the leader change: %v", got)
	}

	// Back, still draining its buffer: the region stays offline.
	agentSeen.BufferedEvents = 2
	stop = f.agent(f.c.Follower().Node, agentSeen)
	time.Sleep(offlineAfter)
	if !f.regionOffline("eu") {
		t.Fatal("eu online while its agent's buffer holds events")
	}
	// The buffer drains: pings of ontime and b-job, sent in time.
	f.ingest(ping(a, aKey, "ontime", "eu", first.Add(55*time.Second)), ping(b, bKey, "b-job", "eu", first.Add(55*time.Second)))
	stop()
	agentSeen.BufferedEvents = 0
	stop = f.agent(f.c.Follower().Node, agentSeen)
	defer stop()
	f.waitFor("one agent.online per account", 20*time.Second, func() bool {
		d := f.hook.distinct()
		return d[key(a, "agent.online", "eu")] == 1 && d[key(b, "agent.online", "eu")] == 1
	})
	f.waitFor("the really missed run's alert", 20*time.Second, func() bool {
		return f.hook.distinct()[key(a, "monitor.missed", "missed")] == 1
	})
	time.Sleep(2 * time.Second) // any repeat or other alert would come by now
	got = f.hook.distinct()
	want := map[string]int{
		key(a, "agent.offline", "eu"): 1, key(b, "agent.offline", "eu"): 1,
		key(a, "agent.online", "eu"): 1, key(b, "agent.online", "eu"): 1,
		key(a, "monitor.missed", "local"): 1, key(a, "monitor.missed", "missed"): 1,
	}
	if len(got) != len(want) {
		t.Errorf("alerts %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d alerts, want %d (all: %v)", k, got[k], n, got)
		}
	}
	if f.regionOffline("eu") {
		t.Fatal("eu still offline")
	}
}
