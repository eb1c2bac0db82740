package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

func addUser(acct, id, email, role string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_AddUser{AddUser: &raftv1.AddUser{
		AccountId: acct, UserId: id, Email: email, Role: role, PasswordHash: []byte("bcrypt-" + id)}}})
}

func setRole(acct, id, role string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_UpdateUser{UpdateUser: &raftv1.UpdateUser{AccountId: acct, UserId: id, Role: role}}})
}

func setUserPassword(acct, id string, hash []byte) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_UpdateUser{UpdateUser: &raftv1.UpdateUser{AccountId: acct, UserId: id, SetPassword: true, PasswordHash: hash}}})
}

func removeUser(acct, id string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_RemoveUser{RemoveUser: &raftv1.RemoveUser{AccountId: acct, UserId: id}}})
}

func createInvite(acct, id, token, email, role string, expires int64) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_CreateInvite{CreateInvite: &raftv1.CreateInvite{
		AccountId: acct, InviteId: id, TokenHash: []byte("hash-" + token), Email: email, Role: role, ExpiresUnixMs: expires, InvitedBy: acct}}})
}

func acceptInvite(token, acct, email, userID string, at int64) *raftv1.Command {
	c := cmd(&raftv1.Command{Op: &raftv1.Command_AcceptInvite{AcceptInvite: &raftv1.AcceptInvite{
		TokenHash: []byte("hash-" + token), AccountId: acct, Email: email, UserId: userID, PasswordHash: []byte("bcrypt-" + userID)}}})
	c.TimeUnixMs = at
	return c
}

func revokeInvite(acct, id string) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_RevokeInvite{RevokeInvite: &raftv1.RevokeInvite{AccountId: acct, InviteId: id}}})
}

// wantApplied requires one command's result to have status and code.
func wantApplied(t *testing.T, s *Store, c *raftv1.Command, status raftv1.Status, code string) {
	t.Helper()
	res := apply(t, s, c)[0]
	if res.GetStatus() != status || res.GetCode() != code {
		t.Fatalf("%v: %v %q %s, want %v %q", c.GetOp(), res.GetStatus(), res.GetCode(), res.GetMessage(), status, code)
	}
}

// usersOf is "email=role" of the account's users, in Users' order.
func usersOf(t *testing.T, s *Store, acct string) string {
	t.Helper()
	users, err := s.Users(acct)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range users {
		out = append(out, u.GetEmail()+"="+u.GetRole())
	}
	return strings.Join(out, " ")
}

// A new account's e-mail is its first owner, with the account's password
// and the account's id; users are added, found by e-mail in any case,
// given roles and removed; the e-mail of a removed user is free again.
func TestUsers(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	if got := usersOf(t, s, "a"); got != "a@example.com=owner" {
		t.Fatalf("users of a new account: %s", got)
	}
	owner, err := s.UserByEmail("A@EXAMPLE.com")
	if err != nil || owner.GetId() != "a" || owner.GetAccountId() != "a" || string(owner.GetPasswordHash()) != "bcrypt-a" {
		t.Fatalf("owner by e-mail: %v %v", owner, err)
	}

	mustOK(t, s, addUser("a", "u1", "Ed@example.com", RoleEditor), addUser("a", "u2", "vi@example.com", RoleViewer))
	if got := usersOf(t, s, "a"); got != "a@example.com=owner Ed@example.com=editor vi@example.com=viewer" {
		t.Fatalf("users: %s", got)
	}
	// An e-mail has one user in the whole cluster: another account's
	// user, an account's own e-mail, any case.
	wantApplied(t, s, addUser("b", "u3", "ed@EXAMPLE.com", RoleViewer), raftv1.Status_STATUS_CONFLICT, CodeUserExists)
	wantApplied(t, s, addUser("b", "u3", "a@example.com", RoleViewer), raftv1.Status_STATUS_CONFLICT, CodeUserExists)
	wantApplied(t, s, createAccount(accountOp("c", "vi@example.com")), raftv1.Status_STATUS_CONFLICT, CodeUserExists)
	wantApplied(t, s, addUser("a", "u1", "other@example.com", RoleViewer), raftv1.Status_STATUS_CONFLICT, "")
	wantApplied(t, s, addUser("nobody", "u4", "x@example.com", RoleViewer), raftv1.Status_STATUS_NOT_FOUND, "")
	for _, role := range []string{"", "admin", "Owner"} {
		wantApplied(t, s, addUser("a", "u4", "x@example.com", role), raftv1.Status_STATUS_INVALID, "")
		wantApplied(t, s, setRole("a", "u1", role+"x"), raftv1.Status_STATUS_INVALID, "")
	}

	// Cached reads see every change as soon as it is applied.
	if u, err := s.User("a", "u1"); err != nil || u.GetRole() != RoleEditor {
		t.Fatalf("u1: %v %v", u, err)
	}
	mustOK(t, s, setRole("a", "u1", RoleViewer), setUserPassword("a", "u1", []byte("new-hash")))
	if u, _ := s.User("a", "u1"); u.GetRole() != RoleViewer || string(u.GetPasswordHash()) != "new-hash" {
		t.Fatalf("u1 after the change: %v", u)
	}
	mustOK(t, s, removeUser("a", "u1"))
	if _, err := s.User("a", "u1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a removed user: %v", err)
	}
	if _, err := s.UserByEmail("ed@example.com"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a removed user by e-mail: %v", err)
	}
	wantApplied(t, s, removeUser("a", "u1"), raftv1.Status_STATUS_NOT_FOUND, "")
	mustOK(t, s, addUser("b", "u5", "ed@example.com", RoleOwner))
	if u, err := s.UserByEmail("ed@example.com"); err != nil || u.GetAccountId() != "b" {
		t.Fatalf("the e-mail in its new account: %v %v", u, err)
	}
	if _, err := s.Users("nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("users of no account: %v", err)
	}
}

// An account keeps an owner: the last one can neither be removed nor
// demoted; with a second owner, either can go.
func TestLastOwner(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), addUser("a", "v", "v@example.com", RoleViewer))
	wantApplied(t, s, removeUser("a", "a"), raftv1.Status_STATUS_CONFLICT, CodeLastOwner)
	wantApplied(t, s, setRole("a", "a", RoleEditor), raftv1.Status_STATUS_CONFLICT, CodeLastOwner)
	mustOK(t, s, setRole("a", "a", RoleOwner)) // no change, allowed
	mustOK(t, s, setRole("a", "v", RoleOwner), setRole("a", "a", RoleViewer))
	wantApplied(t, s, removeUser("a", "v"), raftv1.Status_STATUS_CONFLICT, CodeLastOwner)
	mustOK(t, s, setRole("a", "a", RoleOwner), removeUser("a", "v"))
	if got := usersOf(t, s, "a"); got != "a@example.com=owner" {
		t.Fatalf("users: %s", got)
	}
}

// Invites: accepted once by the e-mail they name, for the account that
// made them, before they expire; a newer one for the same e-mail replaces
// the older; revoked ones are gone.
func TestInvites(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	exp := t0 + InviteTTLMillis
	mustOK(t, s, createInvite("a", "i1", "t1", "New@example.com", RoleEditor, exp))
	inv, err := s.InviteByToken([]byte("hash-t1"))
	if err != nil || inv.GetAccountId() != "a" || inv.GetRole() != RoleEditor || inv.GetExpiresUnixMs() != exp || inv.GetCreatedUnixMs() != t0 {
		t.Fatalf("invite: %v %v", inv, err)
	}

	// Refusals that leave the invite as it is.
	wantApplied(t, s, acceptInvite("t1", "b", "new@example.com", "u1", t0+1), raftv1.Status_STATUS_CONFLICT, CodeInviteMismatch)
	wantApplied(t, s, acceptInvite("t1", "a", "other@example.com", "u1", t0+1), raftv1.Status_STATUS_CONFLICT, CodeInviteMismatch)
	wantApplied(t, s, acceptInvite("t1", "a", "new@example.com", "u1", exp), raftv1.Status_STATUS_CONFLICT, CodeInviteExpired)
	wantApplied(t, s, acceptInvite("nope", "a", "new@example.com", "u1", t0+1), raftv1.Status_STATUS_NOT_FOUND, "")

	// Accepted: the user has the invite's e-mail and role; the link is
	// spent.
	mustOK(t, s, acceptInvite("t1", "a", "NEW@example.com", "u1", exp-1))
	u, err := s.UserByEmail("new@example.com")
	if err != nil || u.GetId() != "u1" || u.GetAccountId() != "a" || u.GetRole() != RoleEditor || u.GetEmail() != "New@example.com" || string(u.GetPasswordHash()) != "bcrypt-u1" {
		t.Fatalf("the invited user: %v %v", u, err)
	}
	wantApplied(t, s, acceptInvite("t1", "a", "new@example.com", "u2", exp-1), raftv1.Status_STATUS_NOT_FOUND, "")
	if list, _ := s.Invites("a"); len(list) != 0 {
		t.Fatalf("invites left: %v", list)
	}

	// Nobody invites an e-mail that has a user.
	wantApplied(t, s, createInvite("b", "i2", "t2", "new@example.com", RoleViewer, exp), raftv1.Status_STATUS_CONFLICT, CodeUserExists)
	wantApplied(t, s, createInvite("b", "i2", "t2", "A@example.com", RoleViewer, exp), raftv1.Status_STATUS_CONFLICT, CodeUserExists)
	// An e-mail that got a user after it was invited cannot accept.
	mustOK(t, s, createInvite("b", "i3", "t3", "late@example.com", RoleViewer, exp))
	mustOK(t, s, addUser("a", "u4", "late@example.com", RoleViewer))
	wantApplied(t, s, acceptInvite("t3", "b", "late@example.com", "u5", t0+1), raftv1.Status_STATUS_CONFLICT, CodeUserExists)

	// Bad commands.
	for _, c := range []*raftv1.Command{
		createInvite("a", "i9", "t9", "x@example.com", "admin", exp),
		createInvite("a", "i9", "t9", "", RoleViewer, exp),
		createInvite("a", "i9", "t9", "x@example.com", RoleViewer, t0),
		createInvite("a", "i9", "t9", "x@example.com", RoleViewer, exp+1),
	} {
		wantApplied(t, s, c, raftv1.Status_STATUS_INVALID, "")
	}
	wantApplied(t, s, createInvite("nobody", "i9", "t9", "x@example.com", RoleViewer, exp), raftv1.Status_STATUS_NOT_FOUND, "")

	// A newer invite for the same e-mail replaces the older one; revoking
	// deletes it.
	mustOK(t, s, removeUser("a", "u4"), createInvite("b", "i4", "t4", "Late@example.com", RoleEditor, exp))
	wantApplied(t, s, acceptInvite("t3", "b", "late@example.com", "u5", t0+1), raftv1.Status_STATUS_NOT_FOUND, "")
	mustOK(t, s, acceptInvite("t4", "b", "late@example.com", "u5", t0+1))
	if u, _ := s.UserByEmail("late@example.com"); u.GetRole() != RoleEditor || u.GetAccountId() != "b" {
		t.Fatalf("the replacing invite's user: %v", u)
	}
	mustOK(t, s, createInvite("b", "i6", "t6", "x@example.com", RoleViewer, exp), revokeInvite("b", "i6"))
	wantApplied(t, s, acceptInvite("t6", "b", "x@example.com", "u6", t0+1), raftv1.Status_STATUS_NOT_FOUND, "")
	wantApplied(t, s, revokeInvite("b", "i6"), raftv1.Status_STATUS_NOT_FOUND, "")
	wantApplied(t, s, revokeInvite("a", "i4"), raftv1.Status_STATUS_NOT_FOUND, "")
	if keys := keysWithPrefix(t, s, []byte("invite")); len(keys) != 0 {
		t.Fatalf("invite keys left: %q", keys)
	}
}

// An account has at most MaxAccountInvites pending invites; expired ones
// are dropped when a new one is made.
func TestInviteLimit(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	for i := range MaxAccountInvites {
		mustOK(t, s, createInvite("a", fmt.Sprint("i", i), fmt.Sprint("t", i), fmt.Sprintf("p%d@example.com", i), RoleViewer, t0+1000))
	}
	wantApplied(t, s, createInvite("a", "over", "over", "over@example.com", RoleViewer, t0+1000), raftv1.Status_STATUS_CONFLICT, CodeInviteLimitReached)
	later := createInvite("a", "later", "later", "later@example.com", RoleViewer, t0+2000)
	later.TimeUnixMs = t0 + 1000
	mustOK(t, s, later)
	if list, _ := s.Invites("a"); len(list) != 1 || list[0].GetId() != "later" {
		t.Fatalf("invites after the expired ones went: %d", len(list))
	}
	if n := len(keysWithPrefix(t, s, prefixInvite)) + len(keysWithPrefix(t, s, prefixInviteAcct)); n != 2 {
		t.Fatalf("%d invite keys, want 2", n)
	}
}

// userWorstCases are the worst user and invite commands
// (TestWorstCasePerCommandType): the longest fields, an account full of
// users, and an invite that drops every expired one of a full account.
func userWorstCases() map[string]worstCase {
	// The account at one user less than its bound (its owner and
	// MaxAccountUsers-2 more), written directly: through AddUser commands,
	// each of which reads the account's users, the setup alone took most
	// of this package's test time.
	fullOfUsers := func(t *testing.T, s *Store) {
		t.Helper()
		mustOK(t, s, addUser("a", "u0", "u0@example.com", RoleOwner))
		err := s.db().Update(func(txn *badger.Txn) error {
			for i := 1; i < MaxAccountUsers-2; i++ {
				u := &statev1.User{Id: fmt.Sprint("u", i), AccountId: "a", Email: fmt.Sprintf("u%d@example.com", i), Role: RoleOwner,
					PasswordHash: []byte(fmt.Sprint("bcrypt-u", i)), CreatedUnixMs: t0}
				if err := putUser(txn, u); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	email := long(254-12) + "@example.com"
	fullOfInvites := func(t *testing.T, s *Store) {
		var cmds []*raftv1.Command
		for i := range MaxAccountInvites {
			cmds = append(cmds, createInvite("a", fmt.Sprint(long(MaxKeyPartBytes-4), i), fmt.Sprint(long(60), i), fmt.Sprint(i, email)[:254], RoleViewer, t0+1))
		}
		mustOK(t, s, cmds...)
	}
	later := func(c *raftv1.Command) *raftv1.Command { c.TimeUnixMs = t0 + 1; return c }
	return map[string]worstCase{
		"add_user": {
			setup: fullOfUsers,
			worst: func(*testing.T, *Store) *raftv1.Command {
				c := addUser("a", long(MaxKeyPartBytes), email, RoleOwner)
				c.GetAddUser().PasswordHash = []byte(long(MaxPasswordHashBytes))
				return c
			},
			want: raftv1.Status_STATUS_OK,
			over: addUser("a", "u", long(MaxKeyPartBytes+1), RoleViewer),
		},
		"update_user": {
			setup: fullOfUsers,
			worst: func(*testing.T, *Store) *raftv1.Command {
				c := setUserPassword("a", "u1", []byte(long(MaxPasswordHashBytes)))
				c.GetUpdateUser().Role = RoleViewer
				return c
			},
			want: raftv1.Status_STATUS_OK,
			over: setUserPassword("a", "u1", []byte(long(MaxPasswordHashBytes+1))),
		},
		"remove_user": {
			setup: fullOfUsers,
			worst: func(*testing.T, *Store) *raftv1.Command { return removeUser("a", "u1") },
			want:  raftv1.Status_STATUS_OK,
			over:  removeUser("a", long(MaxKeyPartBytes+1)),
		},
		"create_invite": {
			setup: fullOfInvites,
			worst: func(*testing.T, *Store) *raftv1.Command {
				return later(createInvite("a", long(MaxKeyPartBytes), long(60), email, RoleOwner, t0+InviteTTLMillis))
			},
			want: raftv1.Status_STATUS_OK,
			over: createInvite("a", "i", "t", long(MaxKeyPartBytes+1), RoleViewer, t0+1),
		},
		"accept_invite": {
			setup: func(t *testing.T, s *Store) {
				fullOfUsers(t, s)
				mustOK(t, s, createInvite("a", "i", long(60), email, RoleOwner, t0+InviteTTLMillis))
			},
			worst: func(*testing.T, *Store) *raftv1.Command {
				c := acceptInvite(long(60), "a", email, long(MaxKeyPartBytes), t0+1)
				c.GetAcceptInvite().PasswordHash = []byte(long(MaxPasswordHashBytes))
				return c
			},
			want: raftv1.Status_STATUS_OK,
			over: acceptInvite(long(MaxKeyPartBytes+1), "a", "e@example.com", "u", t0+1),
		},
		"revoke_invite": {
			setup: fullOfInvites,
			worst: func(*testing.T, *Store) *raftv1.Command {
				return revokeInvite("a", fmt.Sprint(long(MaxKeyPartBytes-4), 99))
			},
			want: raftv1.Status_STATUS_OK,
			over: revokeInvite("a", long(MaxKeyPartBytes+1)),
		},
	}
}
