package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

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
	_, refused, err := readAccount(txn, c.GetAccountId())
	if refused != nil || err != nil {
		return refused, err
	}
	nameKey := k(prefixGroupName, c.GetAccountId(), c.GetName())
	if taken, err := exists(txn, nameKey); err != nil || taken {
		return conflict("a notification group named %q exists", c.GetName()), err
	}
	channels := c.GetChannelsJson()
	if len(channels) == 0 {
		channels = []byte("[]") // none; route reads it as JSON
	}
	if res, err := checkGroupChannels(txn, c.GetAccountId(), channels); res != nil || err != nil {
		return res, err
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
// JSON array of objects, at most MaxGroupChannels of them, each either a
// channel of its own (a type and config) or, by channel_id, an alert
// channel of the account that exists.
func checkGroupChannels(txn *badger.Txn, accountID string, raw []byte) (*raftv1.Result, error) {
	channels, err := parseGroupChannels(raw)
	if err != nil {
		return invalid("%v", err), nil
	}
	if len(channels) > MaxGroupChannels {
		return invalid("%d channels, at most %d", len(channels), MaxGroupChannels), nil
	}
	for i, c := range channels {
		if c.ChannelID == "" {
			continue
		}
		if found, err := exists(txn, channelKey(accountID, c.ChannelID)); err != nil || !found {
			return notFound("channels[%d]: channel %s not found", i, c.ChannelID), err
		}
	}
	return nil, nil
}

// groupChannel is one channel object of a group's channels_json, as route
// reads it: a channel of its own (Type, and its config in raw) or one of
// the account's alert channels named by ChannelID.
type groupChannel struct {
	Type      string `json:"type"`
	ChannelID string `json:"channel_id"`
	raw       json.RawMessage
}

// parseGroupChannels reads a group's channels_json: a JSON array of channel
// objects (empty, null, or anything else is an error).
func parseGroupChannels(raw []byte) ([]groupChannel, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, errors.New("channels must be a JSON array of channel objects")
	}
	channels := make([]groupChannel, len(items))
	for i, item := range items {
		if err := json.Unmarshal(item, &channels[i]); err != nil {
			return nil, errors.New("channels must be a JSON array of channel objects")
		}
		channels[i].raw = item
	}
	return channels, nil
}

// groupRef is the channel_ref of a delivery to the index-th channel of
// group id, whose JSON is raw: group:<id>:<index>:<hash of raw>. The hash
// lets the dispatcher see that the group's channel at that index is no
// longer the one the alert was routed to (the group changed) and give the
// delivery up rather than send it elsewhere.
func groupRef(id string, index int, raw []byte) string {
	return "group:" + id + ":" + strconv.Itoa(index) + ":" + GroupChannelHash(raw)
}

// GroupChannelHash is the hash of a group's channel object (its JSON as
// stored) in the channel_ref of its deliveries: 8 hex digits of FNV-1a.
func GroupChannelHash(raw []byte) string {
	h := fnv.New32a()
	h.Write(raw)
	return fmt.Sprintf("%08x", h.Sum32())
}

// CodeNotificationGroupInUse is the Result code (CONFLICT) of deleting or
// renaming a notification group that monitors name.
const CodeNotificationGroupInUse = "notification_group_in_use"

// applyUpdateGroup replaces a group's name and channels. Monitors name a
// group, so a group they name keeps its name. Open deliveries to a channel
// of the group that is no longer at its place are given up (the channel
// was changed or removed).
func applyUpdateGroup(txn *badger.Txn, ctx applyCtx, c *raftv1.UpdateNotificationGroup) (*raftv1.Result, error) {
	if c.GetGroupId() == "" || c.GetName() == "" {
		return invalid("update notification group: id and name are required"), nil
	}
	acct := c.GetAccountId()
	key := k(prefixGroup, acct, c.GetGroupId())
	var g statev1.NotificationGroup
	if err := getProto(txn, key, &g); errors.Is(err, ErrNotFound) {
		return notFound("notification group %s not found", c.GetGroupId()), nil
	} else if err != nil {
		return nil, err
	}
	channels := c.GetChannelsJson()
	if len(channels) == 0 {
		channels = []byte("[]")
	}
	if res, err := checkGroupChannels(txn, acct, channels); res != nil || err != nil {
		return res, err
	}
	if c.GetName() != g.GetName() {
		newName := k(prefixGroupName, acct, c.GetName())
		if taken, err := exists(txn, newName); err != nil || taken {
			return conflict("a notification group named %q exists", c.GetName()), err
		}
		if res, err := groupInUse(txn, ctx, acct, g.GetName(), "renamed"); res != nil || err != nil {
			return res, err
		}
		if err := txn.Delete(k(prefixGroupName, acct, g.GetName())); err != nil {
			return nil, err
		}
		if err := txn.Set(newName, []byte(g.GetId())); err != nil {
			return nil, err
		}
	}
	now, err := parseGroupChannels(channels)
	if err != nil {
		return nil, err // checked above
	}
	g.Name, g.ChannelsJson = c.GetName(), channels
	if err := setProto(txn, key, &g); err != nil {
		return nil, err
	}
	prefix := "group:" + g.GetId() + ":"
	n, err := giveUpDeliveries(txn, ctx, "notification group changed", func(ref string) bool {
		rest, ok := strings.CutPrefix(ref, prefix)
		return ok && !sameGroupChannel(rest, now)
	})
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: int64(n)}, err
}

// sameGroupChannel tells whether the delivery to "<index>:<hash>" of a
// group still has its channel at that index now that the group's channels
// are now.
func sameGroupChannel(rest string, now []groupChannel) bool {
	index, hash, _ := strings.Cut(rest, ":")
	i, err := strconv.Atoi(index)
	return err == nil && i >= 0 && i < len(now) && GroupChannelHash(now[i].raw) == hash
}

// applyDeleteGroup removes a group that no monitor names and gives up its
// open deliveries.
func applyDeleteGroup(txn *badger.Txn, ctx applyCtx, c *raftv1.DeleteNotificationGroup) (*raftv1.Result, error) {
	acct := c.GetAccountId()
	key := k(prefixGroup, acct, c.GetGroupId())
	var g statev1.NotificationGroup
	if err := getProto(txn, key, &g); errors.Is(err, ErrNotFound) {
		return notFound("notification group %s not found", c.GetGroupId()), nil
	} else if err != nil {
		return nil, err
	}
	if res, err := groupInUse(txn, ctx, acct, g.GetName(), "deleted"); res != nil || err != nil {
		return res, err
	}
	if err := txn.Delete(key); err != nil {
		return nil, err
	}
	if err := txn.Delete(k(prefixGroupName, acct, g.GetName())); err != nil {
		return nil, err
	}
	prefix := "group:" + g.GetId() + ":"
	n, err := giveUpDeliveries(txn, ctx, "notification group deleted", func(ref string) bool { return strings.HasPrefix(ref, prefix) })
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: int64(n)}, err
}

// groupInUse is the CONFLICT of a group called name that monitors of the
// account name (nil when none does), naming one of them; what says what
// cannot be done to the group. It reads every monitor of the account:
// there is no index of monitors by group, and groups change rarely.
func groupInUse(txn *badger.Txn, ctx applyCtx, accountID, name, what string) (*raftv1.Result, error) {
	var first string
	n := 0
	it := txn.NewIterator(badger.IteratorOptions{Prefix: k(prefixMonitorName, accountID, "")})
	var ids []string
	for it.Rewind(); it.Valid(); it.Next() {
		id, err := it.Item().ValueCopy(nil)
		if err != nil {
			it.Close()
			return nil, err
		}
		ids = append(ids, string(id))
	}
	it.Close()
	for _, id := range ids {
		m, err := getMonitorIn(txn, ctx.values, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m.GetNotificationGroup() != name {
			continue
		}
		if n++; first == "" {
			first = m.GetName()
		}
	}
	if n == 0 {
		return nil, nil
	}
	msg := fmt.Sprintf("notification group %q is named by monitor %q", name, first)
	if n > 1 {
		msg = fmt.Sprintf("notification group %q is named by monitor %q and %d more", name, first, n-1)
	}
	res := conflict("%s; it cannot be %s until no monitor names it", msg, what)
	res.Code = CodeNotificationGroupInUse
	return res, nil
}

// NotificationGroup returns one group of the account.
func (s *Store) NotificationGroup(accountID, id string) (*statev1.NotificationGroup, error) {
	var g statev1.NotificationGroup
	if err := s.view(func(txn *badger.Txn) error { return getProto(txn, k(prefixGroup, accountID, id), &g) }); err != nil {
		return nil, err
	}
	return &g, nil
}
