package state

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

type applyCase struct {
	name  string
	setup []*raftv1.Command // each must apply OK
	cmd   *raftv1.Command
	want  raftv1.Status
	check func(t *testing.T, s *Store)
}

// runApplyCases applies each case's command to a fresh store; a status
// other than OK must leave every key but meta:applied untouched.
func runApplyCases(t *testing.T, cases []applyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, tc.setup...)
			before := dumpKV(t, s, false)
			res := apply(t, s, tc.cmd)[0]
			if res.GetStatus() != tc.want {
				t.Fatalf("status %v (%s), want %v", res.GetStatus(), res.GetMessage(), tc.want)
			}
			if tc.want != raftv1.Status_STATUS_OK {
				if res.GetMessage() == "" {
					t.Errorf("status %v without a message", res.GetStatus())
				}
				requireSameKV(t, before, dumpKV(t, s, false))
			}
			if got := s.AppliedIndex(); got != uint64(len(tc.setup)+1) {
				t.Errorf("applied index %d, want %d", got, len(tc.setup)+1)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func requireNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("%s: err %v, want ErrNotFound", what, err)
	}
}

func keyIDs(t *testing.T, s *Store, acct string) []string {
	t.Helper()
	keys, err := s.Keys(acct)
	if err != nil {
		t.Fatalf("keys of %s: %v", acct, err)
	}
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.GetId())
	}
	return ids
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestApplyCreateAccount(t *testing.T) {
	mod := func(f func(op *raftv1.CreateAccount)) *raftv1.Command {
		op := accountOp("b", "b@example.com")
		f(op)
		return createAccount(op)
	}
	existing := createAccount(accountOp("a", "Ann@Example.com"))
	runApplyCases(t, []applyCase{
		{name: "ok", cmd: createAccount(accountOp("a", "Ann@Example.com")), want: raftv1.Status_STATUS_OK,
			check: func(t *testing.T, s *Store) {
				acct, err := s.Account("a")
				if err != nil {
					t.Fatal(err)
				}
				if acct.GetEmail() != "Ann@Example.com" ||
					acct.GetCreatedUnixMs() != t0 || !proto.Equal(acct.GetPlan(), plan("free")) {
					t.Errorf("account %v", acct)
				}
				// The password is its first owner's.
				owner, err := s.User("a", "a")
				if err != nil || owner.GetEmail() != "Ann@Example.com" || owner.GetRole() != RoleOwner || string(owner.GetPasswordHash()) != "bcrypt-a" || owner.GetCreatedUnixMs() != t0 {
					t.Errorf("owner %v %v", owner, err)
				}
				if ids := keyIDs(t, s, "a"); !equalStrings(ids, []string{"ik", "mk"}) {
					t.Errorf("keys %v", ids)
				}
				for _, want := range []*raftv1.Key{key("a", "ik", raftv1.KeyType_KEY_TYPE_INGEST), key("a", "mk", raftv1.KeyType_KEY_TYPE_MANAGEMENT)} {
					want.CreatedUnixMs = t0 // the command's time
					got, err := s.KeyByHash(want.GetHash())
					if err != nil || !proto.Equal(got, want) {
						t.Errorf("KeyByHash(%s) = %v, %v", want.GetHash(), got, err)
					}
				}
			}},
		{name: "e-mail taken in another case", setup: []*raftv1.Command{existing},
			cmd: mod(func(op *raftv1.CreateAccount) { op.Email = "aNN@example.COM" }), want: raftv1.Status_STATUS_CONFLICT},
		{name: "duplicate account id", setup: []*raftv1.Command{existing},
			cmd: mod(func(op *raftv1.CreateAccount) {
				*op = *accountOp("a", "other@example.com")
				op.IngestKey.Hash, op.ManagementKey.Hash = []byte("fresh-1"), []byte("fresh-2")
			}), want: raftv1.Status_STATUS_CONFLICT},
		{name: "key hash used by another account", setup: []*raftv1.Command{existing},
			cmd:  mod(func(op *raftv1.CreateAccount) { op.ManagementKey.Hash = []byte("hash-a-mk") }),
			want: raftv1.Status_STATUS_CONFLICT},
		{name: "ingest key of another account", cmd: mod(func(op *raftv1.CreateAccount) { op.IngestKey.AccountId = "a" }),
			want: raftv1.Status_STATUS_INVALID},
		{name: "management key of another account", cmd: mod(func(op *raftv1.CreateAccount) { op.ManagementKey.AccountId = "a" }),
			want: raftv1.Status_STATUS_INVALID},
		{name: "no id", cmd: mod(func(op *raftv1.CreateAccount) { op.AccountId = "" }), want: raftv1.Status_STATUS_INVALID},
		{name: "no e-mail", cmd: mod(func(op *raftv1.CreateAccount) { op.Email = "" }), want: raftv1.Status_STATUS_INVALID},
		{name: "no plan", cmd: mod(func(op *raftv1.CreateAccount) { op.Plan = nil }), want: raftv1.Status_STATUS_INVALID},
		{name: "no ingest key", cmd: mod(func(op *raftv1.CreateAccount) { op.IngestKey = nil }), want: raftv1.Status_STATUS_INVALID},
		{name: "key without hash", cmd: mod(func(op *raftv1.CreateAccount) { op.IngestKey.Hash = nil }), want: raftv1.Status_STATUS_INVALID},
		{name: "key without type", cmd: mod(func(op *raftv1.CreateAccount) { op.ManagementKey.Type = 0 }), want: raftv1.Status_STATUS_INVALID},
	})
}

func TestApplySetPlan(t *testing.T) {
	pro := &raftv1.Plan{Name: "pro", MonitorLimit: proto.Int64(50), ConfigAsCode: true}
	runApplyCases(t, []applyCase{
		{name: "ok", setup: []*raftv1.Command{newAccount("a")}, cmd: setPlan("a", pro), want: raftv1.Status_STATUS_OK,
			check: func(t *testing.T, s *Store) {
				acct, err := s.Account("a")
				if err != nil || !proto.Equal(acct.GetPlan(), pro) || acct.GetEmail() != "a@example.com" {
					t.Errorf("account %v, %v", acct, err)
				}
			}},
		{name: "account not found", cmd: setPlan("a", pro), want: raftv1.Status_STATUS_NOT_FOUND},
		{name: "no plan", setup: []*raftv1.Command{newAccount("a")}, cmd: setPlan("a", nil), want: raftv1.Status_STATUS_INVALID},
	})
}

func TestApplyCreateKey(t *testing.T) {
	k3 := key("a", "k3", raftv1.KeyType_KEY_TYPE_MANAGEMENT)
	withHash := func(k *raftv1.Key, h string) *raftv1.Key { k.Hash = []byte(h); return k }
	runApplyCases(t, []applyCase{
		{name: "ok", setup: []*raftv1.Command{newAccount("a")}, cmd: createKey(k3), want: raftv1.Status_STATUS_OK,
			check: func(t *testing.T, s *Store) {
				want := proto.Clone(k3).(*raftv1.Key)
				want.CreatedUnixMs = t0 // the command's time
				got, err := s.KeyByHash(k3.GetHash())
				if err != nil || !proto.Equal(got, want) {
					t.Errorf("KeyByHash = %v, %v", got, err)
				}
				if ids := keyIDs(t, s, "a"); !equalStrings(ids, []string{"ik", "k3", "mk"}) {
					t.Errorf("keys %v, want id order", ids)
				}
			}},
		{name: "account not found", cmd: createKey(k3), want: raftv1.Status_STATUS_NOT_FOUND},
		{name: "duplicate hash", setup: []*raftv1.Command{newAccount("a"), newAccount("b")},
			cmd: createKey(withHash(key("a", "k3", raftv1.KeyType_KEY_TYPE_INGEST), "hash-b-ik")), want: raftv1.Status_STATUS_CONFLICT},
		{name: "duplicate id", setup: []*raftv1.Command{newAccount("a")},
			cmd: createKey(withHash(key("a", "ik", raftv1.KeyType_KEY_TYPE_INGEST), "new")), want: raftv1.Status_STATUS_CONFLICT},
		{name: "no hash", setup: []*raftv1.Command{newAccount("a")},
			cmd: createKey(withHash(key("a", "k3", raftv1.KeyType_KEY_TYPE_INGEST), "")), want: raftv1.Status_STATUS_INVALID},
	})
}

func TestApplyRevokeKey(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "ok", setup: []*raftv1.Command{newAccount("a")}, cmd: revokeKey("a", "ik"), want: raftv1.Status_STATUS_OK,
			check: func(t *testing.T, s *Store) {
				_, err := s.KeyByHash([]byte("hash-a-ik"))
				requireNotFound(t, "KeyByHash of revoked key", err)
				if ids := keyIDs(t, s, "a"); !equalStrings(ids, []string{"mk"}) {
					t.Errorf("keys %v, want [mk]", ids)
				}
			}},
		{name: "unknown key", setup: []*raftv1.Command{newAccount("a")}, cmd: revokeKey("a", "nope"), want: raftv1.Status_STATUS_NOT_FOUND},
		{name: "key of another account", setup: []*raftv1.Command{newAccount("a"), newAccount("b"), createKey(key("a", "k3", raftv1.KeyType_KEY_TYPE_INGEST))},
			cmd: revokeKey("b", "k3"), want: raftv1.Status_STATUS_NOT_FOUND},
		{name: "already revoked", setup: []*raftv1.Command{newAccount("a"), revokeKey("a", "ik")},
			cmd: revokeKey("a", "ik"), want: raftv1.Status_STATUS_NOT_FOUND},
	})
}

func TestApplyCreateNotificationGroup(t *testing.T) {
	ch := []byte(`[{"type":"slack","url":"https://hooks.example.com/x"}]`)
	runApplyCases(t, []applyCase{
		{name: "ok", setup: []*raftv1.Command{newAccount("a"), newAccount("b"), createGroup("b", "g1", "ops", nil)},
			cmd: createGroup("a", "g1", "ops", ch), want: raftv1.Status_STATUS_OK,
			check: func(t *testing.T, s *Store) {
				g, err := s.NotificationGroupByName("a", "ops")
				if err != nil || g.GetId() != "g1" || g.GetAccountId() != "a" || string(g.GetChannelsJson()) != string(ch) || g.GetCreatedUnixMs() != t0 {
					t.Errorf("group %v, %v", g, err)
				}
				gs, err := s.NotificationGroups("a")
				if err != nil || len(gs) != 1 || !proto.Equal(gs[0], g) {
					t.Errorf("groups %v, %v", gs, err)
				}
			}},
		{name: "duplicate name", setup: []*raftv1.Command{newAccount("a"), createGroup("a", "g1", "ops", nil)},
			cmd: createGroup("a", "g2", "ops", ch), want: raftv1.Status_STATUS_CONFLICT},
		{name: "account not found", cmd: createGroup("a", "g1", "ops", ch), want: raftv1.Status_STATUS_NOT_FOUND},
		{name: "no name", setup: []*raftv1.Command{newAccount("a")}, cmd: createGroup("a", "g1", "", ch), want: raftv1.Status_STATUS_INVALID},
		{name: "no id", setup: []*raftv1.Command{newAccount("a")}, cmd: createGroup("a", "", "ops", ch), want: raftv1.Status_STATUS_INVALID},
	})
}

func TestApplyCreateAgentToken(t *testing.T) {
	runApplyCases(t, []applyCase{
		{name: "ok", cmd: createAgentToken("t1", "eu", "at-1"), want: raftv1.Status_STATUS_OK,
			check: func(t *testing.T, s *Store) {
				tok, err := s.AgentTokenByHash([]byte("at-1"))
				if err != nil || tok.GetId() != "t1" || tok.GetRegion() != "eu" || tok.GetName() != "agent t1" || tok.GetCreatedUnixMs() != t0 {
					t.Errorf("token %v, %v", tok, err)
				}
			}},
		{name: "duplicate hash", setup: []*raftv1.Command{createAgentToken("t1", "eu", "at-1")},
			cmd: createAgentToken("t2", "us", "at-1"), want: raftv1.Status_STATUS_CONFLICT},
		{name: "no region", cmd: createAgentToken("t1", "", "at-1"), want: raftv1.Status_STATUS_INVALID},
		{name: "no hash", cmd: createAgentToken("t1", "eu", ""), want: raftv1.Status_STATUS_INVALID},
		{name: "no operation", cmd: cmd(&raftv1.Command{}), want: raftv1.Status_STATUS_INVALID},
	})
}

// A token that replaces another starts where the first of the chain
// started; it must name a live token of the same region and accounts.
func TestApplyRotateAgentToken(t *testing.T) {
	later := func(c *raftv1.Command, ms int64) *raftv1.Command { c.TimeUnixMs = t0 + ms; return c }
	rotate := func(id, hash, replaces string, ms int64) *raftv1.Command {
		c := later(createAgentToken(id, "eu", hash), ms)
		c.GetCreateAgentToken().Replaces = replaces
		return c
	}
	runApplyCases(t, []applyCase{
		{name: "chain", setup: []*raftv1.Command{createAgentToken("t1", "eu", "at-1"), rotate("t2", "at-2", "t1", 1000), createAgentToken("t9", "ap", "at-9")},
			cmd: rotate("t3", "at-3", "t2", 2000), want: raftv1.Status_STATUS_OK,
			check: func(t *testing.T, s *Store) {
				for hash, want := range map[string]string{"at-1": "", "at-2": "t1", "at-3": "t2"} {
					tok, err := s.AgentTokenByHash([]byte(hash))
					if err != nil || tok.GetReplaces() != want || AgentTokenValidFrom(tok) != t0 {
						t.Errorf("token %s: %v, %v", hash, tok, err)
					}
				}
				if tok, err := s.AgentToken("t3"); err != nil || tok.GetCreatedUnixMs() != t0+2000 {
					t.Errorf("token t3 by id: %v, %v", tok, err)
				}
				all, err := s.AgentTokens()
				var ids []string
				for _, tok := range all {
					ids = append(ids, tok.GetId())
				}
				if err != nil || !slices.Equal(ids, []string{"t9", "t1", "t2", "t3"}) {
					t.Errorf("tokens in the order %v (%v), want by region, then name", ids, err)
				}
			}},
		{name: "unknown", cmd: rotate("t2", "at-2", "t1", 1000), want: raftv1.Status_STATUS_NOT_FOUND},
		{name: "revoked", setup: []*raftv1.Command{createAgentToken("t1", "eu", "at-1"), revokeAgentToken("t1")},
			cmd: rotate("t2", "at-2", "t1", 1000), want: raftv1.Status_STATUS_NOT_FOUND},
		{name: "another region", setup: []*raftv1.Command{createAgentToken("t1", "us", "at-1")},
			cmd: rotate("t2", "at-2", "t1", 1000), want: raftv1.Status_STATUS_CONFLICT},
		{name: "other accounts", setup: []*raftv1.Command{newAccount("a"), createAgentToken("t1", "eu", "at-1")},
			cmd: func() *raftv1.Command {
				c := rotate("t2", "at-2", "t1", 1000)
				c.GetCreateAgentToken().Accounts = []string{"a"}
				return c
			}(), want: raftv1.Status_STATUS_CONFLICT},
	})
}

// The two personal keys of a new account are checked against the state but
// not against each other: with the same hash (or id) the second putKey
// overwrites the first, leaving a key that Keys lists but KeyByHash cannot
// find (or, with the same id, a key hash that no RevokeKey can reach).
func TestApplyCreateAccountKeysMustDiffer(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(op *raftv1.CreateAccount)
	}{
		{"same hash", func(op *raftv1.CreateAccount) { op.ManagementKey.Hash = op.IngestKey.Hash }},
		{"same id", func(op *raftv1.CreateAccount) { op.ManagementKey.Id = op.IngestKey.Id }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			op := accountOp("a", "a@example.com")
			tc.mod(op)
			res := apply(t, s, createAccount(op))[0]
			if res.GetStatus() == raftv1.Status_STATUS_OK {
				t.Errorf("status OK, want INVALID or CONFLICT; keys listed: %v, key-by-hash entries: %d",
					keyIDs(t, s, "a"), len(keysWithPrefix(t, s, prefixKeyHash)))
			}
		})
	}
}

func TestApplyCreateChannel(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	cmd := func(acct, id string) *raftv1.Command {
		return &raftv1.Command{Version: CommandVersion, Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
			AccountId: acct, ChannelId: id, Type: "slack", Name: "ops", ConfigJson: []byte(`{"webhook_url":"https://hooks.example/x"}`), IsDefault: true,
		}}}
	}
	mustOK(t, s, cmd("a", "c1"))
	for _, tc := range []struct {
		name string
		cmd  *raftv1.Command
		want raftv1.Status
	}{
		{"same id", cmd("a", "c1"), raftv1.Status_STATUS_CONFLICT},
		{"unknown account", cmd("nobody", "c2"), raftv1.Status_STATUS_NOT_FOUND},
		{"no id", cmd("a", ""), raftv1.Status_STATUS_INVALID},
	} {
		if res := apply(t, s, tc.cmd)[0]; res.GetStatus() != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, res.GetStatus(), tc.want)
		}
	}
	chs, err := s.Channels("a")
	if err != nil || len(chs) != 1 || !chs[0].GetIsDefault() || chs[0].GetType() != "slack" {
		t.Fatalf("channels: %v %v", chs, err)
	}
	if c, err := s.Channel("a", "c1"); err != nil || c.GetName() != "ops" {
		t.Fatalf("channel: %v %v", c, err)
	}
}
