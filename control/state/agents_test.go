package state

import (
	"fmt"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

func agentSeenCmd(c *raftv1.RecordAgentSeen) *raftv1.Command {
	return &raftv1.Command{Version: CommandVersion, TimeUnixMs: t0, Op: &raftv1.Command_RecordAgentSeen{RecordAgentSeen: c}}
}

func regionCmd(now int64, region string, offline bool, since int64, done bool, accts ...*raftv1.RegionAccount) *raftv1.Command {
	return &raftv1.Command{Version: CommandVersion, TimeUnixMs: now, Op: &raftv1.Command_SetRegionState{SetRegionState: &raftv1.SetRegionState{
		Region: region, Offline: offline, SinceUnixMs: since, Accounts: accts, Done: done,
	}}}
}

func regionWorstCase() worstCase {
	accts := make([]*raftv1.RegionAccount, MaxRegionAccounts)
	for i := range accts {
		accts[i] = &raftv1.RegionAccount{AccountId: fmt.Sprintf("%03d-", i) + long(900), Monitors: 1 << 40}
	}
	return worstCase{
		// Every account alerted, each with the most default channels.
		setup: func(t *testing.T, s *Store) {
			for i, a := range accts {
				mustOK(t, s, createAccount(accountOp(a.GetAccountId(), fmt.Sprint(i, "@example.com"))))
				mustOK(t, s, createDefaultChannels(a.GetAccountId(), MaxAccountChannels)...)
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			return regionCmd(t0, long(MaxKeyPartBytes), true, t0, true, accts...)
		},
		want: raftv1.Status_STATUS_OK,
		over: regionCmd(t0, "eu", true, t0, true, make([]*raftv1.RegionAccount, MaxRegionAccounts+1)...),
	}
}

func TestRecordAgentSeen(t *testing.T) {
	s := openStore(t)
	c := agentSeenCmd(&raftv1.RecordAgentSeen{AgentId: "ag1", Region: "eu", Name: "edge-1", Connected: true, BufferedEvents: 3})
	mustOK(t, s, c)
	c = agentSeenCmd(&raftv1.RecordAgentSeen{AgentId: "ag1", Region: "eu", Name: "edge-1", Connected: true})
	c.TimeUnixMs = t0 + 5000
	mustOK(t, s, c)
	agents, err := s.Agents()
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents %v %v", agents, err)
	}
	if a := agents[0]; a.GetFirstSeenUnixMs() != t0 || a.GetLastSeenUnixMs() != t0+5000 || a.GetBufferedEvents() != 0 || a.GetName() != "edge-1" {
		t.Fatalf("agent %v", a)
	}
	if r := apply(t, s, agentSeenCmd(&raftv1.RecordAgentSeen{AgentId: "ag2"}))[0]; r.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("agent without region: %v", r)
	}
}

// TestRegionOfflineOncePerAccount: a transition alerts each listed account
// once however often it is listed (a new leader lists them again), a stale
// command of another since changes nothing, and agent.online goes only to
// the accounts alerted offline.
func TestRegionOfflineOncePerAccount(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"), createChannelCmd("a", "c1", true), createChannelCmd("b", "c1", true))
	ra := func(id string, n int64) *raftv1.RegionAccount {
		return &raftv1.RegionAccount{AccountId: id, Monitors: n}
	}
	since := t0 + 1000
	mustOK(t, s, regionCmd(since, "eu", true, since, false, ra("a", 2)))
	mustOK(t, s, regionCmd(since+10, "eu", true, since, true, ra("a", 2), ra("b", 1), ra("gone", 1)))
	if off, _ := s.RegionOffline("eu"); !off {
		t.Fatal("eu is not offline")
	}
	alerts := func() map[string]int {
		t.Helper()
		pending, err := s.PendingAlerts(0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, a := range pending {
			if a.GetRegion() != "eu" || a.GetMonitorUuid() != "" || len(a.GetDeliveries()) != 1 {
				t.Fatalf("alert %v", a)
			}
			out[a.GetAccountId()+" "+a.GetType()]++
		}
		return out
	}
	if got := alerts(); len(got) != 2 || got["a agent.offline"] != 1 || got["b agent.offline"] != 1 {
		t.Fatalf("alerts %v", got)
	}
	// A former leader's command of another transition is stale.
	if r := apply(t, s, regionCmd(since+20, "eu", true, since-500, true, ra("a", 2)))[0]; !r.GetStale() {
		t.Fatalf("stale command: %v", r)
	}
	back := since + 60000
	mustOK(t, s, regionCmd(back, "eu", false, back, true, ra("a", 2), ra("b", 1)))
	mustOK(t, s, regionCmd(back+1, "eu", false, back, true, ra("a", 2), ra("b", 1), ra("c", 5)))
	if got := alerts(); len(got) != 4 || got["a agent.online"] != 1 || got["b agent.online"] != 1 {
		t.Fatalf("alerts %v", got)
	}
	if left, err := s.AlertedAccounts("eu"); err != nil || len(left) != 0 {
		t.Fatalf("alerted accounts left %v %v", left, err)
	}
}

// TestDeadlineOfOfflineRegionDoesNotFire: a ping monitor whose newest ping
// came through an offline region is not judged; once the region is back,
// the same deadline fires.
func TestDeadlineOfOfflineRegionDoesNotFire(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "run", t0, func(e *raftv1.Event) { e.Region = "eu" })))
	m := mustMonitor(t, s, "a", "job")
	if m.GetPing().GetLastRegion() != "eu" || !MonitorInRegion(m, "eu") {
		t.Fatalf("ping state %v", m.GetPing())
	}
	if got, _ := s.RegionAccounts("eu"); len(got) != 1 || got[0].GetAccountId() != "a" || got[0].GetMonitors() != 1 {
		t.Fatalf("region accounts %v", got)
	}
	timeout, _, _ := pingstate.Deadlines(PingSettings(m), PingState(m))
	mustOK(t, s, regionCmd(t0+1000, "eu", true, t0+1000, true))
	if r := apply(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineTimeout, timeout, timeout+1))[0]; !r.GetStale() {
		t.Fatalf("deadline in an offline region: %v", r)
	}
	mustOK(t, s, regionCmd(timeout+2, "eu", false, timeout+2, true))
	if r := apply(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineTimeout, timeout, timeout+3))[0]; r.GetStale() || r.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("deadline after the region is back: %v", r)
	}
}
