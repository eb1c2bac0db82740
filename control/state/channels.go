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
	_, refused, err := readAccount(txn, c.GetAccountId())
	if refused != nil || err != nil {
		return refused, err
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

// ChannelsGeneration grows whenever an applied entry may have changed a
// channel or a notification group of any account, and at every restore: a
// channel made from what Channel or NotificationGroups returned is stale
// once it moved (read it before reading them). Reading it reads no
// database.
func (s *Store) ChannelsGeneration() uint64 { return s.channelsGen.Load() }

// CodeChannelInUse is the Result code (CONFLICT) of deleting an alert
// channel that a notification group names.
const CodeChannelInUse = "channel_in_use"

// applyUpdateChannel replaces a channel's type, name, config and default
// flag. The config was validated by the proposer. Its open deliveries
// stay: they are sent with the new config when they come due.
func applyUpdateChannel(txn *badger.Txn, c *raftv1.UpdateChannel) (*raftv1.Result, error) {
	if c.GetChannelId() == "" || c.GetType() == "" {
		return invalid("update channel: id and type are required"), nil
	}
	key := channelKey(c.GetAccountId(), c.GetChannelId())
	var ch statev1.Channel
	if err := getProto(txn, key, &ch); errors.Is(err, ErrNotFound) {
		return notFound("channel %s not found", c.GetChannelId()), nil
	} else if err != nil {
		return nil, err
	}
	ch.Type, ch.Name, ch.ConfigJson, ch.IsDefault = c.GetType(), c.GetName(), c.GetConfigJson(), c.GetIsDefault()
	return ok(), setProto(txn, key, &ch)
}

// applyDeleteChannel removes a channel that no notification group names,
// with its delivery history, and gives up its open deliveries (see
// giveUpDeliveries). Result.deleted counts those given up.
func applyDeleteChannel(txn *badger.Txn, ctx applyCtx, c *raftv1.DeleteChannel) (*raftv1.Result, error) {
	acct, id := c.GetAccountId(), c.GetChannelId()
	key := channelKey(acct, id)
	if found, err := exists(txn, key); err != nil || !found {
		return notFound("channel %s not found", id), err
	}
	var inGroup string
	err := scanProto(txn, k(prefixGroup, acct, ""), func() *statev1.NotificationGroup { return new(statev1.NotificationGroup) },
		func(g *statev1.NotificationGroup) error {
			channels, _ := parseGroupChannels(g.GetChannelsJson())
			for _, gc := range channels {
				if gc.ChannelID == id && inGroup == "" {
					inGroup = g.GetName()
				}
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	if inGroup != "" {
		res := conflict("the channel is in notification group %q; take it out of the group first", inGroup)
		res.Code = CodeChannelInUse
		return res, nil
	}
	if err := txn.Delete(key); err != nil {
		return nil, err
	}
	if err := deleteHistory(txn, acct, id); err != nil {
		return nil, err
	}
	ref := "chan:" + id
	n, err := giveUpDeliveries(txn, ctx, "channel deleted", func(r string) bool { return r == ref })
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: int64(n)}, err
}
