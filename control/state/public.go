package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// What anyone may read without signing in (control/public): badges, found
// by the account's badge key, and the account's status page, found by its
// slug.
//
//	badge:<badge key>          -> account id
//	status-page:<account id>   -> statev1.StatusPage
//	status-slug:<slug>         -> account id

// CodeSlugTaken is the Result code (CONFLICT) of a PutStatusPage whose
// slug another account's page holds.
const CodeSlugTaken = "slug_taken"

// MaxStatusPageMatch bounds the entries (monitors, tags and projects
// together) of a status page's match.
const MaxStatusPageMatch = 1000

func badgeKey(key string) []byte          { return k(prefixBadge, key) }
func statusPageKey(account string) []byte { return k(prefixStatusPage, account) }
func statusSlugKey(slug string) []byte    { return k(prefixStatusSlug, slug) }

// applySetBadgeKey gives an account a new badge key, retiring the old one
// (unless if_none and the account has one).
func applySetBadgeKey(txn *badger.Txn, c *raftv1.SetBadgeKey) (*raftv1.Result, error) {
	if c.GetAccountId() == "" || c.GetBadgeKey() == "" {
		return invalid("set badge key: account id and key are required"), nil
	}
	acct, refused, err := readAccount(txn, c.GetAccountId())
	if refused != nil || err != nil {
		return refused, err
	}
	if c.GetIfNone() && acct.GetBadgeKey() != "" {
		return ok(), nil
	}
	if taken, err := exists(txn, badgeKey(c.GetBadgeKey())); err != nil || taken {
		return conflict("the badge key is in use"), err
	}
	if old := acct.GetBadgeKey(); old != "" {
		if err := txn.Delete(badgeKey(old)); err != nil {
			return nil, err
		}
	}
	acct.BadgeKey = c.GetBadgeKey()
	if err := txn.Set(badgeKey(acct.BadgeKey), []byte(acct.Id)); err != nil {
		return nil, err
	}
	return ok(), setProto(txn, k(prefixAccount, acct.Id), acct)
}

// applyPutStatusPage replaces an account's status page. Its slug must not
// be another account's (CodeSlugTaken); a page keeps its slug while
// disabled.
func applyPutStatusPage(txn *badger.Txn, ctx applyCtx, c *raftv1.PutStatusPage) (*raftv1.Result, error) {
	acctID := c.GetAccountId()
	if acctID == "" || c.GetSlug() == "" {
		return invalid("put status page: account id and slug are required"), nil
	}
	if found, err := exists(txn, k(prefixAccount, acctID)); err != nil || !found {
		return notFound("account %s not found", acctID), err
	}
	owner, err := getRaw(txn, statusSlugKey(c.GetSlug()))
	switch {
	case err == nil && string(owner) != acctID:
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeSlugTaken, Message: "the slug " + c.GetSlug() + " is taken"}, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	}
	var old statev1.StatusPage
	err = getProto(txn, statusPageKey(acctID), &old)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err == nil && old.GetSlug() != c.GetSlug() {
		if err := txn.Delete(statusSlugKey(old.GetSlug())); err != nil {
			return nil, err
		}
	}
	if err := txn.Set(statusSlugKey(c.GetSlug()), []byte(acctID)); err != nil {
		return nil, err
	}
	page := &statev1.StatusPage{Enabled: c.GetEnabled(), Slug: c.GetSlug(), Title: c.GetTitle(), Match: c.GetMatch(), UpdatedUnixMs: ctx.now}
	return ok(), setProto(txn, statusPageKey(acctID), page)
}

// changesPublic tells whether cmd can change what control/public caches:
// a badge key or a status page.
func changesPublic(cmd *raftv1.Command) bool {
	switch cmd.GetOp().(type) {
	case *raftv1.Command_SetBadgeKey, *raftv1.Command_PutStatusPage:
		return true
	}
	return false
}

// PublicGeneration grows whenever an applied entry changed a badge key or
// a status page, and at every restore: a cache of public pages keyed by
// slug or badge key is stale once it moved. Reading it reads no database.
func (s *Store) PublicGeneration() uint64 { return s.publicGen.Load() }

// AccountByBadgeKey returns the account whose badge key is key;
// ErrNotFound for an unknown (or retired) key.
func (s *Store) AccountByBadgeKey(key string) (*statev1.Account, error) {
	var id []byte
	err := s.view(func(txn *badger.Txn) error {
		var err error
		id, err = getRaw(txn, badgeKey(key))
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Account(string(id))
}

// StatusPage returns the account's status page; ErrNotFound when it has
// none.
func (s *Store) StatusPage(accountID string) (*statev1.StatusPage, error) {
	page := new(statev1.StatusPage)
	if err := s.view(func(txn *badger.Txn) error { return getProto(txn, statusPageKey(accountID), page) }); err != nil {
		return nil, err
	}
	return page, nil
}

// StatusPageBySlug returns the account and the status page of slug
// (enabled or not); ErrNotFound when no page has it.
func (s *Store) StatusPageBySlug(slug string) (string, *statev1.StatusPage, error) {
	var acct string
	page := new(statev1.StatusPage)
	err := s.view(func(txn *badger.Txn) error {
		id, err := getRaw(txn, statusSlugKey(slug))
		if err != nil {
			return err
		}
		acct = string(id)
		return getProto(txn, statusPageKey(acct), page)
	})
	if err != nil {
		return "", nil, err
	}
	return acct, page, nil
}
