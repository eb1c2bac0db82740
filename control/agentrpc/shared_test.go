package agentrpc_test

import (
	"sync/atomic"
	"testing"

	"lookout/control/agentrpc"
	"lookout/control/state"
	"lookout/internal/apikey"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// countingState counts the readings of assignments.
type countingState struct {
	*state.Store
	reads atomic.Int64
}

func (c *countingState) AgentAssignments(region string, accounts []string) (*state.Assignments, error) {
	c.reads.Add(1)
	return c.Store.AgentAssignments(region, accounts)
}

// TestStreamsOfARegionShareReadings: 20 streams of one region cost one
// reading of the state to open and one per change, not one per stream.
func TestStreamsOfARegionShareReadings(t *testing.T) {
	t.Parallel()
	var cs *countingState
	n := newOneNode(t, agentrpc.Options{}, func(st *state.Store) agentrpc.State {
		cs = &countingState{Store: st}
		return cs
	})
	c, apply := n.client, n.apply

	var streams []*stream
	for range 20 {
		s := openStream(t, c, &agentv1.AssignmentsRequest{})
		s.next(t) // synced
		streams = append(streams, s)
	}
	if n := cs.reads.Load(); n != 1 {
		t.Fatalf("%d readings for 20 streams opened without a change, want 1", n)
	}
	_, ikHash, _ := apikey.New(apikey.Ingest)
	_, mkHash, _ := apikey.New(apikey.Management)
	apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{AccountId: "a", Email: "a@example.com", Plan: &raftv1.Plan{Name: "p"},
		IngestKey:     &raftv1.Key{Id: "ik", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_INGEST, Hash: ikHash},
		ManagementKey: &raftv1.Key{Id: "mk", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Hash: mkHash}}}})
	for i, s := range streams {
		if m := s.next(t); len(m.GetKeys()) != 1 || m.GetKeys()[0].GetId() != "ik" {
			t.Fatalf("stream %d: %v", i, m)
		}
	}
	if n := cs.reads.Load(); n > 3 {
		t.Fatalf("%d readings for one change seen by 20 streams, want about 1", n-1)
	}
}
