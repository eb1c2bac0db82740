package manage

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// badgeKeyPrefix starts every badge key: the secret part of an account's
// public badge URLs (/badge/<key>/...). It is a capability to read the
// state of the account's monitors, nothing more, so it is kept in clear
// and shown again whenever asked; regenerating it retires the old one.
const badgeKeyPrefix = "bk_"

// newBadgeKey draws a badge key: 20 random bytes (160 bits) in lower-case
// base32 without padding, safe in a URL path.
func newBadgeKey() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return badgeKeyPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)), nil
}

// BadgeKey returns the account's badge key. An account has none until it
// is first asked for: it is made then (SetBadgeKey with if_none, so two
// nodes asking at once agree on the first one applied).
func (a *API) BadgeKey(ctx context.Context, accountID string) (string, error) {
	acct, err := a.state.Account(accountID)
	if err != nil {
		return "", err
	}
	if k := acct.GetBadgeKey(); k != "" {
		return k, nil
	}
	if err := a.setBadgeKey(ctx, accountID, true); err != nil {
		return "", err
	}
	acct, err = a.state.Account(accountID)
	if err != nil {
		return "", err
	}
	return acct.GetBadgeKey(), nil
}

// RegenerateBadgeKey gives the account a new badge key and returns it:
// the badge URLs with the old key answer 404 from then on.
func (a *API) RegenerateBadgeKey(ctx context.Context, accountID string) (string, error) {
	if err := a.setBadgeKey(ctx, accountID, false); err != nil {
		return "", err
	}
	acct, err := a.state.Account(accountID)
	if err != nil {
		return "", err
	}
	return acct.GetBadgeKey(), nil
}

func (a *API) setBadgeKey(ctx context.Context, accountID string, ifNone bool) error {
	key, err := newBadgeKey()
	if err != nil {
		return err
	}
	res, err := a.cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_SetBadgeKey{SetBadgeKey: &raftv1.SetBadgeKey{
		AccountId: accountID, BadgeKey: key, IfNone: ifNone,
	}}})
	if err != nil {
		return err
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		return errors.New("set badge key: " + res.GetMessage())
	}
	return nil
}
