package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestReads(t *testing.T) {
	s := openStore(t)
	mustOK(t, s,
		createAccount(accountOp("b", "Bob@Example.com")),
		newAccount("a"),
		newAccount("ab"), // shares a prefix with "a"
		createKey(key("ab", "k1", raftv1.KeyType_KEY_TYPE_INGEST)),
		createGroup("a", "g2", "second", nil),
		createGroup("a", "g1", "first", nil),
		createGroup("ab", "g3", "first", nil),
		createAgentToken("t1", "eu", "at-1"),
	)

	accts, err := s.Accounts()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range accts {
		ids = append(ids, a.GetId())
	}
	if !equalStrings(ids, []string{"a", "ab", "b"}) {
		t.Errorf("Accounts: %v, want id order [a ab b]", ids)
	}

	for _, email := range []string{"Bob@Example.com", "bob@example.com", "BOB@EXAMPLE.COM", "bOb@eXample.cOm"} {
		acct, err := s.AccountByEmail(email)
		if err != nil || acct.GetId() != "b" || acct.GetEmail() != "Bob@Example.com" {
			t.Errorf("AccountByEmail(%q) = %v, %v", email, acct, err)
		}
	}

	for _, tc := range []struct {
		acct       string
		keys       []string
		groupNames []string
	}{
		{acct: "a", keys: []string{"ik", "mk"}, groupNames: []string{"first", "second"}},
		{acct: "ab", keys: []string{"ik", "k1", "mk"}, groupNames: []string{"first"}},
		{acct: "b", keys: []string{"ik", "mk"}},
		{acct: "nobody"},
	} {
		if got := keyIDs(t, s, tc.acct); !equalStrings(got, tc.keys) {
			t.Errorf("Keys(%s) = %v, want %v", tc.acct, got, tc.keys)
		}
		gs, err := s.NotificationGroups(tc.acct)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range gs {
			names = append(names, g.GetName())
		}
		if !equalStrings(names, tc.groupNames) {
			t.Errorf("NotificationGroups(%s) = %v, want %v (group id order)", tc.acct, names, tc.groupNames)
		}
	}
	if g, err := s.NotificationGroupByName("ab", "first"); err != nil || g.GetId() != "g3" {
		t.Errorf("NotificationGroupByName(ab, first) = %v, %v", g, err)
	}

	for _, tc := range []struct {
		name string
		read func() error
	}{
		{"Account", func() error { _, err := s.Account("nobody"); return err }},
		{"AccountByEmail", func() error { _, err := s.AccountByEmail("nobody@example.com"); return err }},
		{"KeyByHash", func() error { _, err := s.KeyByHash([]byte("nope")); return err }},
		{"NotificationGroupByName other account", func() error { _, err := s.NotificationGroupByName("b", "first"); return err }},
		{"NotificationGroupByName unknown", func() error { _, err := s.NotificationGroupByName("a", "third"); return err }},
		{"AgentTokenByHash", func() error { _, err := s.AgentTokenByHash([]byte("at-2")); return err }},
	} {
		requireNotFound(t, tc.name, tc.read())
	}
}
