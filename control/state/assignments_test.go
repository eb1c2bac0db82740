package state

import (
	"fmt"
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
// can change agent assignments (an agent token too: it changes who serves
// a check; not after others), and AgentAssignments reads the enabled
// checks of a region and every ingest key with its plan.
func TestAssignmentsChangedAndRead(t *testing.T) {
	s := openStore(t)
	ch := s.AssignmentsChanged()
	mustOK(t, s, newAccount("a"))
	if !closed(ch) {
		t.Fatal("no signal after an account was created")
	}
	ch = s.AssignmentsChanged()
	mustOK(t, s, setPassword("a", []byte("bcrypt-b")))
	if closed(ch) {
		t.Fatal("signal after a password was set")
	}
	mustOK(t, s, createAgentToken("t1", "eu", "h1"))
	if !closed(ch) {
		t.Fatal("no signal after an agent token was created")
	}
	ch = s.AssignmentsChanged()
	putRegionCheck(t, s, 0, "eu", "us")
	if !closed(ch) {
		t.Fatal("no signal after a check was created")
	}
	a, err := s.AgentAssignments("eu", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Checks) != 1 || a.Checks[0].GetUuid() != checkID || len(a.Keys) != 1 || a.Keys[0].Key.GetType() != raftv1.KeyType_KEY_TYPE_INGEST || a.Keys[0].Plan == nil ||
		len(a.Tokens) != 1 || a.Tokens[0].GetId() != "t1" {
		t.Fatalf("assignments of eu: %v", a)
	}
	if a, _ := s.AgentAssignments("ap", nil); len(a.Checks) != 0 || len(a.Keys) != 1 {
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

// TestAssignmentsOfATokenWithAccounts: a token that names account a gets
// a's checks and ingest keys only; a token without accounts gets every
// account's; the tokens of the region come with them, and the state keeps
// a token's accounts sorted, once each. A token naming an account that
// does not exist, or too many, is refused.
func TestAssignmentsOfATokenWithAccounts(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	putRegionCheck(t, s, 0, "eu")
	other := &raftv1.MonitorSpec{Uuid: "22222222-2222-4333-8444-555555555555", Kind: KindHTTPCheck, Name: "site-b", Enabled: true, Schedule: "1m",
		Regions: []string{"eu"}, Config: &raftv1.CheckConfig{Url: "https://example.com/b", Method: "GET", Timeout: 10}}
	mustOK(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "b", Creates: []*raftv1.MonitorSpec{other}}}}))
	tokenOf := func(id, hash string, accounts ...string) *raftv1.Command {
		c := createAgentToken(id, "eu", hash)
		c.GetCreateAgentToken().Accounts = accounts
		return c
	}
	mustOK(t, s, tokenOf("ta", "ha", "a", "a"), createAgentToken("tall", "eu", "hall"))

	tok, err := s.AgentTokenByHash([]byte("ha"))
	if err != nil || fmt.Sprint(tok.GetAccounts()) != "[a]" {
		t.Fatalf("token of a: %v %v", tok, err)
	}
	a, err := s.AgentAssignments("eu", tok.GetAccounts())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Checks) != 1 || a.Checks[0].GetAccountId() != "a" || len(a.Keys) != 1 || a.Keys[0].Key.GetAccountId() != "a" {
		t.Fatalf("assignments of a token of a: %d checks %d keys: %v", len(a.Checks), len(a.Keys), a)
	}
	if len(a.Tokens) != 2 || a.Tokens[0].GetId() != "ta" || a.Tokens[1].GetId() != "tall" {
		t.Fatalf("tokens of the region: %v", a.Tokens)
	}
	all, err := s.AgentAssignments("eu", nil)
	if err != nil || len(all.Checks) != 2 || len(all.Keys) != 2 {
		t.Fatalf("assignments of a token of every account: %v %v", all, err)
	}
	if !ServesAccount(tok, "a") || ServesAccount(tok, "b") || !ServesAccount(a.Tokens[1], "b") {
		t.Fatal("ServesAccount")
	}

	if res := apply(t, s, tokenOf("tx", "hx", "a", "nobody"))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("a token of an unknown account: %v", res)
	}
	many := make([]string, MaxAgentTokenAccounts+1)
	for i := range many {
		many[i] = fmt.Sprint("acct-", i)
	}
	if res := apply(t, s, tokenOf("ty", "hy", many...))[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("a token of too many accounts: %v", res)
	}
	if _, err := s.AgentTokenByHash([]byte("hx")); err == nil {
		t.Fatal("a refused token was stored")
	}
}
