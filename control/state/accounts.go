package state

import (
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// applyCreateAccount stores a new account, its e-mail index, its first
// owner (the account's e-mail and password; the user's id is the
// account's) and its two personal keys. A taken e-mail (an account's, or
// a user's) is a conflict and changes nothing.
func applyCreateAccount(txn *badger.Txn, now int64, c *raftv1.CreateAccount) (*raftv1.Result, error) {
	if c.GetAccountId() == "" || c.GetEmail() == "" || c.GetPlan() == nil {
		return invalid("create account: id, e-mail and plan are required"), nil
	}
	emailKey := k(prefixEmail, strings.ToLower(c.GetEmail()))
	if taken, err := exists(txn, emailKey); err != nil || taken {
		return conflict("an account with e-mail %s exists", c.GetEmail()), err
	}
	if taken, err := emailHasUser(txn, c.GetEmail()); err != nil || taken {
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeUserExists, Message: "the e-mail " + c.GetEmail() + " already has a user"}, err
	}
	if taken, err := exists(txn, k(prefixAccount, c.GetAccountId())); err != nil || taken {
		return conflict("account %s exists", c.GetAccountId()), err
	}
	ik, mk := c.GetIngestKey(), c.GetManagementKey()
	if ik.GetId() == mk.GetId() || string(ik.GetHash()) == string(mk.GetHash()) {
		return invalid("create account: the two personal keys must differ in id and hash"), nil
	}
	for _, key := range []*raftv1.Key{ik, mk} {
		if key.GetAccountId() != c.GetAccountId() {
			return invalid("create account: key %s belongs to another account", key.GetId()), nil
		}
		if res, err := checkNewKey(txn, key); res != nil || err != nil {
			return res, err
		}
	}
	acct := &statev1.Account{
		Id:            c.GetAccountId(),
		Email:         c.GetEmail(),
		Plan:          c.GetPlan(),
		CreatedUnixMs: now,
	}
	if err := setProto(txn, k(prefixAccount, acct.Id), acct); err != nil {
		return nil, err
	}
	// The account's e-mail is its first owner, with the password.
	owner := &statev1.User{Id: acct.Id, AccountId: acct.Id, Email: acct.Email, Role: RoleOwner,
		PasswordHash: c.GetPasswordHash(), CreatedUnixMs: now}
	if err := putUser(txn, owner); err != nil {
		return nil, err
	}
	if err := txn.Set(emailKey, []byte(acct.Id)); err != nil {
		return nil, err
	}
	for _, key := range []*raftv1.Key{c.GetIngestKey(), c.GetManagementKey()} {
		if err := putKey(txn, key, now); err != nil {
			return nil, err
		}
	}
	return ok(), nil
}

// applySetPlan replaces an account's plan. A quota suspension ends at once
// when the account is no longer over the new limit (the quota rule "plan
// upgraded"); see quotaAfterPlanChange.
func applySetPlan(txn *badger.Txn, now int64, c *raftv1.SetPlan) (*raftv1.Result, error) {
	if c.GetPlan() == nil {
		return invalid("set plan: plan is required"), nil
	}
	acct, refused, err := readAccount(txn, c.GetAccountId())
	if refused != nil || err != nil {
		return refused, err
	}
	acct.Plan = c.GetPlan()
	if err := setProto(txn, k(prefixAccount, acct.Id), acct); err != nil {
		return nil, err
	}
	return ok(), quotaAfterPlanChange(txn, acct.Id, acct.Plan, now)
}

// MaxPasswordHashBytes bounds a stored password hash (a bcrypt hash is
// 60 bytes).
const MaxPasswordHashBytes = 128

// applySetPassword replaces the password hash of the account's user
// whose e-mail is the account's (its first owner); an empty hash removes
// the password. NOT_FOUND when the account has no such user any more.
func applySetPassword(txn *badger.Txn, c *raftv1.SetPassword) (*raftv1.Result, error) {
	acct, res, err := readAccount(txn, c.GetAccountId())
	if res != nil || err != nil {
		return res, err
	}
	users, err := accountUsers(txn, acct.GetId())
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		if strings.EqualFold(u.GetEmail(), acct.GetEmail()) {
			u.PasswordHash = c.GetPasswordHash()
			return ok(), setProto(txn, userKey(u.GetAccountId(), u.GetId()), u)
		}
	}
	return notFound("account %s has no user with its e-mail %s: set a user's password instead", acct.GetId(), acct.GetEmail()), nil
}

// Account returns the account with id.
// The answer may be shared with other callers: do not modify it.
func (s *Store) Account(id string) (*statev1.Account, error) {
	if a, ok := s.auth.account(id); ok {
		return a, nil
	}
	gen := s.auth.generation()
	var acct statev1.Account
	err := s.view(func(txn *badger.Txn) error { return getProto(txn, k(prefixAccount, id), &acct) })
	if err != nil {
		return nil, err
	}
	s.auth.putAccount(gen, &acct)
	return &acct, nil
}

// AccountByEmail returns the account whose e-mail is email (any case):
// the account's own e-mail, not its users' (UserByEmail).
func (s *Store) AccountByEmail(email string) (*statev1.Account, error) {
	var acct statev1.Account
	err := s.view(func(txn *badger.Txn) error {
		id, err := getRaw(txn, k(prefixEmail, strings.ToLower(email)))
		if err != nil {
			return err
		}
		return getProto(txn, k(prefixAccount, string(id)), &acct)
	})
	if err != nil {
		return nil, err
	}
	return &acct, nil
}

// AccountsAfter returns up to limit accounts in id order, from the first
// id after after ("" for the first page), and whether more follow.
func (s *Store) AccountsAfter(after string, limit int) ([]*statev1.Account, bool, error) {
	var out []*statev1.Account
	more := false
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixAccount, PrefetchValues: true, PrefetchSize: min(limit+1, 100)})
		defer it.Close()
		start := prefixAccount
		if after != "" {
			start = append(k(prefixAccount, after), 0) // the first key after the account's own
		}
		for it.Seek(start); it.Valid(); it.Next() {
			if len(out) == limit {
				more = true
				return nil
			}
			a := new(statev1.Account)
			if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, a) }); err != nil {
				return fmt.Errorf("account %q: %w", it.Item().Key(), err)
			}
			out = append(out, a)
		}
		return nil
	})
	return out, more, err
}

// Accounts returns every account in id order.
func (s *Store) Accounts() ([]*statev1.Account, error) {
	var out []*statev1.Account
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixAccount, func() *statev1.Account { return new(statev1.Account) },
			func(a *statev1.Account) error { out = append(out, a); return nil })
	})
	return out, err
}
