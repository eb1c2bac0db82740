package state

import (
	"bytes"
	"errors"
	"sort"
	"strings"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Users of an account: the people who sign in to its panel, each with a
// role. An e-mail has at most one user in the whole cluster, because the
// e-mail is what a person signs in with.
//
//	user:<account id>:<user id>      -> statev1.User
//	user-email:<lower-case e-mail>   -> <account id>:<user id>
//
// An account is created with its e-mail as its first owner, whose user id
// is the account's id; the users are the one place passwords are kept.

// The roles of a user. Viewers read; editors also change monitors,
// channels, maintenance windows and pauses; owners also keys, users and
// the account.
const (
	RoleOwner  = "owner"
	RoleEditor = "editor"
	RoleViewer = "viewer"
)

// ValidRole tells whether role is one of the three.
func ValidRole(role string) bool {
	return role == RoleOwner || role == RoleEditor || role == RoleViewer
}

// RoleRank orders the roles: viewer 1, editor 2, owner 3; anything else 0.
func RoleRank(role string) int {
	switch role {
	case RoleViewer:
		return 1
	case RoleEditor:
		return 2
	case RoleOwner:
		return 3
	}
	return 0
}

// Result codes of the user and invite commands.
const (
	// CodeUserExists (CONFLICT): the e-mail already has a user.
	CodeUserExists = "user_exists"
	// CodeLastOwner (CONFLICT): the change would leave no owner.
	CodeLastOwner = "last_owner"
	// CodeUserLimitReached (CONFLICT): the account has MaxAccountUsers.
	CodeUserLimitReached = "user_limit_reached"
)

// MaxAccountUsers bounds the users of one account.
const MaxAccountUsers = 1000

func userKey(accountID, userID string) []byte { return k(prefixUser, accountID, userID) }

func userEmailKey(email string) []byte { return k(prefixUserEmail, strings.ToLower(email)) }

// accountUsers reads the account's user records.
func accountUsers(txn *badger.Txn, accountID string) ([]*statev1.User, error) {
	var out []*statev1.User
	err := scanProto(txn, append(k(prefixUser, accountID), ':'), func() *statev1.User { return new(statev1.User) },
		func(u *statev1.User) error { out = append(out, u); return nil })
	return out, err
}

// readAccount reads an account for a command: a NOT_FOUND result when it
// does not exist.
func readAccount(txn *badger.Txn, id string) (*statev1.Account, *raftv1.Result, error) {
	acct := new(statev1.Account)
	err := getProto(txn, k(prefixAccount, id), acct)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound("account %s not found", id), nil
	}
	return acct, nil, err
}

// putUser writes a user and its e-mail index.
func putUser(txn *badger.Txn, u *statev1.User) error {
	if err := setProto(txn, userKey(u.GetAccountId(), u.GetId()), u); err != nil {
		return err
	}
	return txn.Set(userEmailKey(u.GetEmail()), []byte(u.GetAccountId()+":"+u.GetId()))
}

// emailHasUser tells whether email has a user.
func emailHasUser(txn *badger.Txn, email string) (bool, error) {
	return exists(txn, userEmailKey(email))
}

// owners counts the owners among users.
func owners(users []*statev1.User) int {
	n := 0
	for _, u := range users {
		if u.GetRole() == RoleOwner {
			n++
		}
	}
	return n
}

// newUserChecks are what adding a user (AddUser, AcceptInvite) refuses:
// an e-mail that has a user, an account at MaxAccountUsers, a taken id.
func newUserChecks(txn *badger.Txn, acct *statev1.Account, userID, email string) (*raftv1.Result, error) {
	if taken, err := emailHasUser(txn, email); err != nil || taken {
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeUserExists, Message: "the e-mail " + email + " already has a user"}, err
	}
	users, err := accountUsers(txn, acct.GetId())
	if err != nil {
		return nil, err
	}
	if len(users) >= MaxAccountUsers {
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeUserLimitReached, Message: "the account has the most users it may have"}, nil
	}
	if taken, err := exists(txn, userKey(acct.GetId(), userID)); err != nil || taken {
		return conflict("user %s exists", userID), err
	}
	return nil, nil
}

// applyAddUser adds a user to an account (AddUser).
func applyAddUser(txn *badger.Txn, now int64, c *raftv1.AddUser) (*raftv1.Result, error) {
	if c.GetAccountId() == "" || c.GetUserId() == "" || c.GetEmail() == "" || !ValidRole(c.GetRole()) {
		return invalid("add user: account id, user id, e-mail and a role (owner, editor, viewer) are required"), nil
	}
	acct, res, err := readAccount(txn, c.GetAccountId())
	if res != nil || err != nil {
		return res, err
	}
	if res, err := newUserChecks(txn, acct, c.GetUserId(), c.GetEmail()); res != nil || err != nil {
		return res, err
	}
	u := &statev1.User{Id: c.GetUserId(), AccountId: acct.GetId(), Email: c.GetEmail(), Role: c.GetRole(),
		PasswordHash: c.GetPasswordHash(), CreatedUnixMs: now}
	return ok(), putUser(txn, u)
}

// readUser reads a user of an account for a command (NOT_FOUND when
// either does not exist); users are all of the account's users.
func readUser(txn *badger.Txn, accountID, userID string) (u *statev1.User, users []*statev1.User, res *raftv1.Result, err error) {
	if _, res, err := readAccount(txn, accountID); res != nil || err != nil {
		return nil, nil, res, err
	}
	users, err = accountUsers(txn, accountID)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, x := range users {
		if x.GetId() == userID {
			return x, users, nil, nil
		}
	}
	return nil, nil, notFound("user %s not found", userID), nil
}

func lastOwner(u *statev1.User) *raftv1.Result {
	return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeLastOwner,
		Message: u.GetEmail() + " is the account's last owner: make another user an owner first"}
}

// applyUpdateUser changes a user's role or password (UpdateUser).
func applyUpdateUser(txn *badger.Txn, c *raftv1.UpdateUser) (*raftv1.Result, error) {
	if c.GetRole() != "" && !ValidRole(c.GetRole()) {
		return invalid("update user: role %q is not owner, editor or viewer", c.GetRole()), nil
	}
	u, users, res, err := readUser(txn, c.GetAccountId(), c.GetUserId())
	if res != nil || err != nil {
		return res, err
	}
	if c.GetRole() != "" {
		if u.GetRole() == RoleOwner && c.GetRole() != RoleOwner && owners(users) == 1 {
			return lastOwner(u), nil
		}
		u.Role = c.GetRole()
	}
	if c.GetSetPassword() {
		u.PasswordHash = c.GetPasswordHash()
	}
	return ok(), setProto(txn, userKey(u.GetAccountId(), u.GetId()), u)
}

// applyRemoveUser removes a user (RemoveUser).
func applyRemoveUser(txn *badger.Txn, c *raftv1.RemoveUser) (*raftv1.Result, error) {
	u, users, res, err := readUser(txn, c.GetAccountId(), c.GetUserId())
	if res != nil || err != nil {
		return res, err
	}
	if u.GetRole() == RoleOwner && owners(users) == 1 {
		return lastOwner(u), nil
	}
	if err := txn.Delete(userKey(u.GetAccountId(), u.GetId())); err != nil {
		return nil, err
	}
	ref, err := getRaw(txn, userEmailKey(u.GetEmail()))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if bytes.Equal(ref, []byte(u.GetAccountId()+":"+u.GetId())) {
		err = txn.Delete(userEmailKey(u.GetEmail()))
	}
	return ok(), err
}

// Users returns the account's users, owners first, then by e-mail. An
// unknown account is an error wrapping ErrNotFound.
func (s *Store) Users(accountID string) ([]*statev1.User, error) {
	if _, err := s.Account(accountID); err != nil {
		return nil, err
	}
	var users []*statev1.User
	err := s.view(func(txn *badger.Txn) error {
		var err error
		users, err = accountUsers(txn, accountID)
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(users, func(i, j int) bool {
		if ri, rj := RoleRank(users[i].GetRole()), RoleRank(users[j].GetRole()); ri != rj {
			return ri > rj
		}
		return strings.ToLower(users[i].GetEmail()) < strings.ToLower(users[j].GetEmail())
	})
	return users, nil
}

// User returns a user of an account, or an error wrapping ErrNotFound.
// The answer is cached with the accounts (authCache) and may be shared:
// do not modify it.
func (s *Store) User(accountID, userID string) (*statev1.User, error) {
	if u, ok := s.auth.user(accountID, userID); ok {
		return u, nil
	}
	gen := s.auth.generation()
	u := new(statev1.User)
	err := s.view(func(txn *badger.Txn) error { return getProto(txn, userKey(accountID, userID), u) })
	if err != nil {
		return nil, err
	}
	s.auth.putUser(gen, u)
	return u, nil
}

// UserByEmail returns the user whose e-mail is email (any case), in
// whichever account it is, or an error wrapping ErrNotFound.
func (s *Store) UserByEmail(email string) (*statev1.User, error) {
	var ref []byte
	err := s.view(func(txn *badger.Txn) error {
		var err error
		ref, err = getRaw(txn, userEmailKey(email))
		return err
	})
	if err != nil {
		return nil, err
	}
	acct, user, _ := strings.Cut(string(ref), ":")
	return s.User(acct, user)
}
