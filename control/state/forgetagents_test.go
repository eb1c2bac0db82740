package state

import (
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

func forgetCmd(now int64, c *raftv1.ForgetAgents) *raftv1.Command {
	return &raftv1.Command{Version: CommandVersion, TimeUnixMs: now, Op: &raftv1.Command_ForgetAgents{ForgetAgents: c}}
}

func seenAt(now int64, id, region string) *raftv1.Command {
	c := agentSeenCmd(&raftv1.RecordAgentSeen{AgentId: id, Region: region, Connected: true})
	c.TimeUnixMs = now
	return c
}

func agentIDs(t *testing.T, s *Store) []string {
	t.Helper()
	agents, err := s.Agents()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range agents {
		out = append(out, a.GetId())
	}
	return out
}

// TestForgetAgents: the operator's forget removes one record (NOT_FOUND
// for an unknown id); the leader's pruning removes only the listed agents
// still unseen for its bound at the command's time.
func TestForgetAgents(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, seenAt(t0, "ag1", "eu"), seenAt(t0, "ag2", "eu"), seenAt(t0, "ag3", "us"))
	if r := apply(t, s, forgetCmd(t0, &raftv1.ForgetAgents{AgentIds: []string{"nobody"}}))[0]; r.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("unknown agent: %v", r)
	}
	mustOK(t, s, forgetCmd(t0, &raftv1.ForgetAgents{AgentIds: []string{"ag1"}}))
	if got := fmt.Sprint(agentIDs(t, s)); got != "[ag2 ag3]" {
		t.Fatalf("agents %s", got)
	}
	mustOK(t, s, seenAt(t0+600, "ag3", "us")) // seen since the leader looked
	prune := forgetCmd(t0+1000, &raftv1.ForgetAgents{AgentIds: []string{"ag2", "ag3", "gone"}, UnseenForMs: 1000})
	if r := apply(t, s, prune)[0]; r.GetStatus() != raftv1.Status_STATUS_OK || r.GetDeleted() != 1 {
		t.Fatalf("prune: %v", r)
	}
	if got := fmt.Sprint(agentIDs(t, s)); got != "[ag3]" {
		t.Fatalf("agents %s", got)
	}
	for _, bad := range []*raftv1.ForgetAgents{{}, {AgentIds: []string{"a"}, Region: "eu"}, {AgentIds: []string{"a"}, UnseenForMs: -1}} {
		if r := apply(t, s, forgetCmd(t0, bad))[0]; r.GetStatus() != raftv1.Status_STATUS_INVALID {
			t.Fatalf("%v: %v", bad, r)
		}
	}
}

// TestForgetRegion: a region that still has an agent is left alone; once
// its agents are gone, its marks go, MaxForgetMarks a command, and its
// verdict with the last of them: it is no longer offline, no longer
// listed, and a later offline verdict alerts its accounts afresh.
func TestForgetRegion(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	mustOK(t, s, seenAt(t0, "ag1", "eu"))
	mustOK(t, s, regionCmd(t0+1000, "eu", true, t0+1000, true, &raftv1.RegionAccount{AccountId: "a", Monitors: 1}))
	// More marks than one command removes (accounts since deleted).
	err := s.db().Update(func(txn *badger.Txn) error {
		for i := range MaxForgetMarks + 5 {
			b, _ := proto.Marshal(&statev1.AlertedAccount{SinceUnixMs: t0 + 1000})
			if err := txn.Set(regionAcctKey("eu", fmt.Sprintf("x%04d", i)), b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := apply(t, s, forgetCmd(t0+2000, &raftv1.ForgetAgents{Region: "eu"}))[0]; !r.GetStale() {
		t.Fatalf("a region with an agent: %v", r)
	}
	if off, _ := s.RegionOffline("eu"); !off {
		t.Fatal("a region with an agent was forgotten")
	}
	mustOK(t, s, forgetCmd(t0+2000, &raftv1.ForgetAgents{AgentIds: []string{"ag1"}}))
	r := apply(t, s, forgetCmd(t0+2000, &raftv1.ForgetAgents{Region: "eu"}))[0]
	if r.GetDeleted() != MaxForgetMarks {
		t.Fatalf("first pass: %v", r)
	}
	if regions, _ := s.Regions(); len(regions) != 1 {
		t.Fatal("the verdict went before the marks")
	}
	if r := apply(t, s, forgetCmd(t0+2000, &raftv1.ForgetAgents{Region: "eu"}))[0]; r.GetDeleted() != 6 || r.GetStale() {
		t.Fatalf("second pass: %v", r)
	}
	regions, _ := s.Regions()
	marks, _ := s.AlertedAccounts("eu")
	if off, _ := s.RegionOffline("eu"); off || len(regions) != 0 || len(marks) != 0 {
		t.Fatalf("offline %v, regions %v, marks %d", off, regions, len(marks))
	}
	// The region comes back with a new agent and goes offline again: the
	// account is alerted again.
	pending, _ := s.PendingAlerts(0)
	before := len(pending)
	mustOK(t, s, seenAt(t0+3000, "ag9", "eu"))
	mustOK(t, s, regionCmd(t0+9000, "eu", true, t0+9000, true, &raftv1.RegionAccount{AccountId: "a", Monitors: 1}))
	if pending, _ := s.PendingAlerts(0); len(pending) != before+1 {
		t.Fatalf("alerts %d, want %d", len(pending), before+1)
	}
}

// forgetAgentsWorstCase: the most ids, each of the longest, all known.
func forgetAgentsWorstCase() worstCase {
	ids := make([]string, MaxForgetAgents)
	for i := range ids {
		ids[i] = fmt.Sprintf("%03d", i) + long(MaxKeyPartBytes-3)
	}
	return worstCase{
		setup: func(t *testing.T, s *Store) {
			for _, id := range ids {
				mustOK(t, s, seenAt(t0, id, long(MaxKeyPartBytes)))
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			return forgetCmd(t0, &raftv1.ForgetAgents{AgentIds: ids})
		},
		want: raftv1.Status_STATUS_OK,
		over: forgetCmd(t0, &raftv1.ForgetAgents{AgentIds: make([]string, MaxForgetAgents+1)}),
	}
}

// forgetRegionWorstCase: a region of the longest name whose marks, more
// than one command removes, have the longest account ids.
func forgetRegionWorstCase() worstCase {
	region := long(MaxKeyPartBytes)
	return worstCase{
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, regionCmd(t0, region, true, t0, true))
			err := s.db().Update(func(txn *badger.Txn) error {
				for i := range MaxForgetMarks + 1 {
					b, _ := proto.Marshal(&statev1.AlertedAccount{SinceUnixMs: t0, Monitors: 1 << 40})
					if err := txn.Set(regionAcctKey(region, fmt.Sprintf("%04d", i)+long(MaxKeyPartBytes-4)), b); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			return forgetCmd(t0, &raftv1.ForgetAgents{Region: region})
		},
		want: raftv1.Status_STATUS_OK,
		over: forgetCmd(t0, &raftv1.ForgetAgents{Region: long(MaxKeyPartBytes + 1)}),
	}
}
