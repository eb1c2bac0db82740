package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestAssignmentsChangedAndRead: the broadcast fires after entries that
// can change agent assignments (not after others), and AgentAssignments
// reads the enabled checks of a region and every ingest key with its plan.
func TestAssignmentsChangedAndRead(t *testing.T) {
	s := openStore(t)
	ch := s.AssignmentsChanged()
	mustOK(t, s, newAccount("a"))
	if !closed(ch) {
		t.Fatal("no signal after an account was created")
	}
	ch = s.AssignmentsChanged()
	mustOK(t, s, createAgentToken("t1", "eu", "h1"))
	if closed(ch) {
		t.Fatal("signal after an agent token was created")
	}
	putRegionCheck(t, s, 0, "eu", "us")
	if !closed(ch) {
		t.Fatal("no signal after a check was created")
	}
	a, err := s.AgentAssignments("eu")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Checks) != 1 || a.Checks[0].GetUuid() != checkID || len(a.Keys) != 1 || a.Keys[0].Key.GetType() != raftv1.KeyType_KEY_TYPE_INGEST || a.Keys[0].Plan == nil {
		t.Fatalf("assignments of eu: %v", a)
	}
	if a, _ := s.AgentAssignments("ap"); len(a.Checks) != 0 || len(a.Keys) != 1 {
		t.Fatalf("assignments of ap: %v", a)
	}

	// Revoking a token by id: OK once, then not found.
	if res := apply(t, s, revokeAgentToken("t1"))[0]; res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("revoke: %v", res)
	}
	if _, err := s.AgentTokenByHash([]byte("h1")); err == nil {
		t.Fatal("revoked token still found")
	}
	if res := apply(t, s, revokeAgentToken("t1"))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("second revoke: %v", res)
	}
}
