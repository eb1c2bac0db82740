package state

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// applyCreateGroup adds a notification group; names are unique per
// account. Its channels (none when empty) must be a JSON array of at most
// MaxGroupChannels channel objects: route reads them for every alert of
// the group, and must never fail, and an alert carries one delivery per
// channel.
func applyCreateGroup(txn *badger.Txn, now int64, c *raftv1.CreateNotificationGroup) (*raftv1.Result, error) {
	if c.GetGroupId() == "" || c.GetName() == "" {
		return invalid("create notification group: id and name are required"), nil
	}
	var acct statev1.Account
	err := getProto(txn, k(prefixAccount, c.GetAccountId()), &acct)
	if errors.Is(err, ErrNotFound) {
		return notFound("account %s not found", c.GetAccountId()), nil
	}
	if err != nil {
		return nil, err
	}
	nameKey := k(prefixGroupName, c.GetAccountId(), c.GetName())
	if taken, err := exists(txn, nameKey); err != nil || taken {
		return conflict("a notification group named %q exists", c.GetName()), err
	}
	channels := c.GetChannelsJson()
	if len(channels) == 0 {
		channels = []byte("[]") // none; route reads it as JSON
	}
	if err := checkGroupChannels(channels); err != nil {
		return invalid("create notification group: %v", err), nil
	}
	g := &statev1.NotificationGroup{
		Id:            c.GetGroupId(),
		AccountId:     c.GetAccountId(),
		Name:          c.GetName(),
		ChannelsJson:  channels,
		CreatedUnixMs: now,
	}
	if err := setProto(txn, k(prefixGroup, g.AccountId, g.Id), g); err != nil {
		return nil, err
	}
	return ok(), txn.Set(nameKey, []byte(g.Id))
}

// NotificationGroups returns the groups of an account in id order.
func (s *Store) NotificationGroups(accountID string) ([]*statev1.NotificationGroup, error) {
	var out []*statev1.NotificationGroup
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, k(prefixGroup, accountID, ""), func() *statev1.NotificationGroup { return new(statev1.NotificationGroup) },
			func(g *statev1.NotificationGroup) error { out = append(out, g); return nil })
	})
	return out, err
}

// NotificationGroupByName returns the account's group called name.
func (s *Store) NotificationGroupByName(accountID, name string) (*statev1.NotificationGroup, error) {
	var g statev1.NotificationGroup
	err := s.view(func(txn *badger.Txn) error {
		id, err := getRaw(txn, k(prefixGroupName, accountID, name))
		if err != nil {
			return err
		}
		return getProto(txn, k(prefixGroup, accountID, string(id)), &g)
	})
	if err != nil {
		return nil, err
	}
	return &g, nil
}

// checkGroupChannels checks a group's channels_json as route reads it: a
// JSON array of objects, at most MaxGroupChannels of them.
func checkGroupChannels(raw []byte) error {
	channels, err := parseGroupChannels(raw)
	if err != nil {
		return err
	}
	if len(channels) > MaxGroupChannels {
		return fmt.Errorf("%d channels, at most %d", len(channels), MaxGroupChannels)
	}
	return nil
}

// groupChannel is one channel object of a group's channels_json, as route
// reads it.
type groupChannel struct {
	Type string `json:"type"`
}

// parseGroupChannels reads a group's channels_json: a JSON array of channel
// objects (empty, null, or anything else is an error).
func parseGroupChannels(raw []byte) ([]groupChannel, error) {
	var channels []groupChannel
	if err := json.Unmarshal(raw, &channels); err != nil || channels == nil {
		return nil, errors.New("channels must be a JSON array of channel objects")
	}
	return channels, nil
}
