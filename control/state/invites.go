package state

import (
	"errors"
	"sort"
	"strings"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Invitations to an account: an owner makes a link for one e-mail and
// role; following it (setting a password, or signing in with single
// sign-on as that e-mail) makes the user, once, within InviteTTLMillis.
//
//	invite:<sha-256 of the link's secret>       -> statev1.Invite
//	invite-acct:<account id>:<invite id>         -> sha-256 of the link's secret
//
// An account has at most MaxAccountInvites pending invites; expired ones
// are dropped as the account makes new ones, so nothing grows for ever.

// InviteTTLMillis is how long an invitation link works: 7 days.
const InviteTTLMillis = 7 * 24 * 60 * 60 * 1000

// MaxAccountInvites bounds the pending invites of one account.
const MaxAccountInvites = 100

// Result codes of the invite commands.
const (
	// CodeInviteExpired (CONFLICT): the invite's time ran out.
	CodeInviteExpired = "invite_expired"
	// CodeInviteMismatch (CONFLICT): the invite is another account's or
	// another e-mail's.
	CodeInviteMismatch = "invite_mismatch"
	// CodeInviteLimitReached (CONFLICT): the account has
	// MaxAccountInvites pending invites.
	CodeInviteLimitReached = "invite_limit_reached"
)

func inviteKey(tokenHash []byte) []byte { return kb(prefixInvite, tokenHash) }

// accountInvites reads the account's pending invites (expired ones
// included), in invite id order.
func accountInvites(txn *badger.Txn, accountID string) ([]*statev1.Invite, error) {
	var hashes [][]byte
	it := txn.NewIterator(badger.IteratorOptions{Prefix: append(k(prefixInviteAcct, accountID), ':'), PrefetchValues: true})
	for it.Rewind(); it.Valid(); it.Next() {
		h, err := it.Item().ValueCopy(nil)
		if err != nil {
			it.Close()
			return nil, err
		}
		hashes = append(hashes, h)
	}
	it.Close()
	out := make([]*statev1.Invite, 0, len(hashes))
	for _, h := range hashes {
		inv := new(statev1.Invite)
		if err := getProto(txn, inviteKey(h), inv); err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	return out, nil
}

// deleteInvite deletes an invite and its account index.
func deleteInvite(txn *badger.Txn, inv *statev1.Invite) error {
	if err := txn.Delete(inviteKey(inv.GetTokenHash())); err != nil {
		return err
	}
	return txn.Delete(k(prefixInviteAcct, inv.GetAccountId(), inv.GetId()))
}

// applyCreateInvite records an invitation (CreateInvite).
func applyCreateInvite(txn *badger.Txn, now int64, c *raftv1.CreateInvite) (*raftv1.Result, error) {
	if c.GetAccountId() == "" || c.GetInviteId() == "" || len(c.GetTokenHash()) == 0 || c.GetEmail() == "" || !ValidRole(c.GetRole()) {
		return invalid("create invite: account id, invite id, token hash, e-mail and a role (owner, editor, viewer) are required"), nil
	}
	if c.GetExpiresUnixMs() <= now || c.GetExpiresUnixMs() > now+InviteTTLMillis {
		return invalid("create invite: the expiry must be within %d days of the command's time", InviteTTLMillis/(24*60*60*1000)), nil
	}
	if _, res, err := readAccount(txn, c.GetAccountId()); res != nil || err != nil {
		return res, err
	}
	if taken, err := emailHasUser(txn, c.GetEmail()); err != nil || taken {
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeUserExists, Message: "the e-mail " + c.GetEmail() + " already has a user"}, err
	}
	if taken, err := exists(txn, inviteKey(c.GetTokenHash())); err != nil || taken {
		return conflict("the invite's token is in use"), err
	}
	if taken, err := exists(txn, k(prefixInviteAcct, c.GetAccountId(), c.GetInviteId())); err != nil || taken {
		return conflict("invite %s exists", c.GetInviteId()), err
	}
	// Drop the expired invites and an older one for the same e-mail.
	pending, err := accountInvites(txn, c.GetAccountId())
	if err != nil {
		return nil, err
	}
	kept := 0
	for _, inv := range pending {
		if now >= inv.GetExpiresUnixMs() || strings.EqualFold(inv.GetEmail(), c.GetEmail()) {
			if err := deleteInvite(txn, inv); err != nil {
				return nil, err
			}
			continue
		}
		kept++
	}
	if kept >= MaxAccountInvites {
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeInviteLimitReached,
			Message: "the account has the most pending invites it may have: revoke some first"}, nil
	}
	inv := &statev1.Invite{Id: c.GetInviteId(), AccountId: c.GetAccountId(), Email: c.GetEmail(), Role: c.GetRole(),
		TokenHash: c.GetTokenHash(), CreatedUnixMs: now, ExpiresUnixMs: c.GetExpiresUnixMs(), InvitedBy: c.GetInvitedBy()}
	if err := setProto(txn, inviteKey(inv.GetTokenHash()), inv); err != nil {
		return nil, err
	}
	return ok(), txn.Set(k(prefixInviteAcct, inv.GetAccountId(), inv.GetId()), inv.GetTokenHash())
}

// applyAcceptInvite makes the invited user and deletes the invite
// (AcceptInvite).
func applyAcceptInvite(txn *badger.Txn, now int64, c *raftv1.AcceptInvite) (*raftv1.Result, error) {
	if len(c.GetTokenHash()) == 0 || c.GetAccountId() == "" || c.GetEmail() == "" || c.GetUserId() == "" {
		return invalid("accept invite: token hash, account id, e-mail and user id are required"), nil
	}
	inv := new(statev1.Invite)
	err := getProto(txn, inviteKey(c.GetTokenHash()), inv)
	if errors.Is(err, ErrNotFound) {
		return notFound("no such invite: it was used, revoked or replaced"), nil
	}
	if err != nil {
		return nil, err
	}
	if now >= inv.GetExpiresUnixMs() {
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeInviteExpired, Message: "the invite expired"}, nil
	}
	if inv.GetAccountId() != c.GetAccountId() || !strings.EqualFold(inv.GetEmail(), c.GetEmail()) {
		return &raftv1.Result{Status: raftv1.Status_STATUS_CONFLICT, Code: CodeInviteMismatch,
			Message: "the invite is for " + inv.GetEmail() + ", not " + c.GetEmail()}, nil
	}
	acct, res, err := readAccount(txn, inv.GetAccountId())
	if res != nil || err != nil {
		return res, err
	}
	if res, err := newUserChecks(txn, acct, c.GetUserId(), inv.GetEmail()); res != nil || err != nil {
		return res, err
	}
	u := &statev1.User{Id: c.GetUserId(), AccountId: acct.GetId(), Email: inv.GetEmail(), Role: inv.GetRole(),
		PasswordHash: c.GetPasswordHash(), CreatedUnixMs: now}
	if err := putUser(txn, u); err != nil {
		return nil, err
	}
	return ok(), deleteInvite(txn, inv)
}

// applyRevokeInvite deletes an invite (RevokeInvite).
func applyRevokeInvite(txn *badger.Txn, c *raftv1.RevokeInvite) (*raftv1.Result, error) {
	hash, err := getRaw(txn, k(prefixInviteAcct, c.GetAccountId(), c.GetInviteId()))
	if errors.Is(err, ErrNotFound) {
		return notFound("invite %s not found", c.GetInviteId()), nil
	}
	if err != nil {
		return nil, err
	}
	return ok(), deleteInvite(txn, &statev1.Invite{Id: c.GetInviteId(), AccountId: c.GetAccountId(), TokenHash: hash})
}

// Invites returns the account's pending invites, expired ones included
// (the caller knows the time), oldest first.
func (s *Store) Invites(accountID string) ([]*statev1.Invite, error) {
	var out []*statev1.Invite
	err := s.view(func(txn *badger.Txn) error {
		var err error
		out, err = accountInvites(txn, accountID)
		return err
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetCreatedUnixMs() < out[j].GetCreatedUnixMs() })
	return out, err
}

// InviteByToken returns the invite whose link secret hashes to tokenHash,
// or an error wrapping ErrNotFound.
func (s *Store) InviteByToken(tokenHash []byte) (*statev1.Invite, error) {
	inv := new(statev1.Invite)
	err := s.view(func(txn *badger.Txn) error { return getProto(txn, inviteKey(tokenHash), inv) })
	if err != nil {
		return nil, err
	}
	return inv, nil
}
