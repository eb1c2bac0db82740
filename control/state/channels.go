package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

func channelKey(accountID, id string) []byte { return k(prefixChannel, accountID, id) }

// applyCreateChannel stores an alert channel of an account. The config was
// validated by the proposer; the state keeps it as sent. An account has at
// most MaxAccountChannels channels (an alert to its default channels
// carries one delivery per channel).
func applyCreateChannel(txn *badger.Txn, now int64, c *raftv1.CreateChannel) (*raftv1.Result, error) {
	if c.GetChannelId() == "" || c.GetType() == "" {
		return invalid("create channel: id and type are required"), nil
	}
	var acct statev1.Account
	err := getProto(txn, k(prefixAccount, c.GetAccountId()), &acct)
	if errors.Is(err, ErrNotFound) {
		return notFound("account %s not found", c.GetAccountId()), nil
	}
	if err != nil {
		return nil, err
	}
	key := channelKey(c.GetAccountId(), c.GetChannelId())
	if taken, err := exists(txn, key); err != nil || taken {
		return conflict("channel %s exists", c.GetChannelId()), err
	}
	n := 0 // the account's channels, counted by key
	it := txn.NewIterator(badger.IteratorOptions{Prefix: k(prefixChannel, c.GetAccountId(), "")})
	for it.Rewind(); it.Valid(); it.Next() {
		n++
	}
	it.Close()
	if n >= MaxAccountChannels {
		res := conflict("the account has %d channels, at most %d", n, MaxAccountChannels)
		res.Code = CodeChannelLimitReached
		return res, nil
	}
	ch := &statev1.Channel{
		Id: c.GetChannelId(), AccountId: c.GetAccountId(), Type: c.GetType(), Name: c.GetName(),
		ConfigJson: c.GetConfigJson(), IsDefault: c.GetIsDefault(), CreatedUnixMs: now,
	}
	return ok(), setProto(txn, key, ch)
}

// Channels returns the account's channels in id order.
func (s *Store) Channels(accountID string) ([]*statev1.Channel, error) {
	var out []*statev1.Channel
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, k(prefixChannel, accountID, ""), func() *statev1.Channel { return new(statev1.Channel) },
			func(c *statev1.Channel) error { out = append(out, c); return nil })
	})
	return out, err
}

// Channel returns one channel of the account.
func (s *Store) Channel(accountID, id string) (*statev1.Channel, error) {
	var c statev1.Channel
	if err := s.view(func(txn *badger.Txn) error { return getProto(txn, channelKey(accountID, id), &c) }); err != nil {
		return nil, err
	}
	return &c, nil
}
