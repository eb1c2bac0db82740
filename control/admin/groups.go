package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// maxGroupName bounds a notification group's name, in characters.
const maxGroupName = 100

// groupBody is the JSON of POST /admin/v1/accounts/{id}/notification-groups.
type groupBody struct {
	Name     string          `json:"name"`
	Channels json.RawMessage `json:"channels"`
}

// channelBody is one channel object of a group: a channel of its own
// (type, name, config), or an alert channel of the account named by
// channel_id (and nothing else).
type channelBody struct {
	Type      string          `json:"type"`
	Name      *string         `json:"name"`
	Config    json.RawMessage `json:"config"`
	ChannelID *string         `json:"channel_id"`
}

// channelRef is a group's channel object that names an alert channel.
type channelRef struct {
	ChannelID string `json:"channel_id"`
}

// channelOut is a channel object as stored and answered when its config
// was changed (a webhook secret made).
type channelOut struct {
	Type   string          `json:"type"`
	Name   *string         `json:"name,omitempty"`
	Config json.RawMessage `json:"config"`
}

// GroupCreated is the answer.
type GroupCreated struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Channels json.RawMessage `json:"channels"`
}

// handleCreateGroup serves POST /admin/v1/accounts/{id}/notification-groups.
func (a *API) handleCreateGroup(w http.ResponseWriter, r *http.Request) {
	var body groupBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	created, err := a.createGroup(r.Context(), r.PathValue("id"), body)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

func (a *API) createGroup(ctx context.Context, accountID string, body groupBody) (*GroupCreated, error) {
	if err := checkName("name", body.Name, maxGroupName); err != nil {
		return nil, err
	}
	if err := a.accountExists(accountID); err != nil {
		return nil, err
	}
	channels, err := a.checkChannels(accountID, body.Channels, nil)
	if err != nil {
		return nil, err
	}
	id := uuid.NewString()
	cmd := &raftv1.Command{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
		AccountId:    accountID,
		GroupId:      id,
		Name:         body.Name,
		ChannelsJson: channels,
	}}}
	if err := checkCommand(cmd, "the notification group"); err != nil {
		return nil, err
	}
	if err = a.apply(ctx, cmd); err != nil {
		return nil, err
	}
	return &GroupCreated{ID: id, Name: body.Name, Channels: channels}, nil
}

// checkChannels validates the channels array of a group of the account,
// each config with the channel registry, and returns it compacted; a
// webhook channel without a secret gets one. A channel_id must name an
// alert channel of the account. A masked secret is replaced by the one of
// stored (the group's channels as stored, when it is changed) whose mask
// it is. Absent or null is an empty array.
func (a *API) checkChannels(accountID string, raw json.RawMessage, stored []channelBody) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("[]"), nil
	}
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, invalidField("channels", "must be an array of channel objects")
	}
	if len(items) > state.MaxGroupChannels {
		return nil, invalidField("channels", fmt.Sprintf("at most %d channels, got %d", state.MaxGroupChannels, len(items)))
	}
	var out bytes.Buffer
	out.WriteByte('[')
	for i, item := range items {
		path := fmt.Sprintf("channels[%d]", i)
		var ch channelBody
		if err := decodeObject(item, &ch, path); err != nil {
			return nil, err
		}
		item, err := a.checkGroupChannel(accountID, path, i, item, ch, stored)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteByte(',')
		}
		if err := json.Compact(&out, item); err != nil {
			return nil, fmt.Errorf("compact channel: %w", err)
		}
	}
	out.WriteByte(']')
	return out.Bytes(), nil
}

// checkGroupChannel checks the index-th channel object of a group, item
// (decoded in ch), and returns it as it is to be stored.
func (a *API) checkGroupChannel(accountID, path string, index int, item json.RawMessage, ch channelBody, stored []channelBody) (json.RawMessage, error) {
	if ch.ChannelID != nil {
		if ch.Type != "" || ch.Name != nil || ch.Config != nil {
			return nil, invalidField(path, "a channel named by channel_id has no type, name or config of its own")
		}
		if _, err := a.state.Channel(accountID, *ch.ChannelID); errors.Is(err, state.ErrNotFound) {
			return nil, invalidField(path+".channel_id", "no alert channel "+strconv.Quote(*ch.ChannelID)+" on the account")
		} else if err != nil {
			return nil, fmt.Errorf("read channel %s: %w", *ch.ChannelID, err)
		}
		return marshal(channelRef{ChannelID: *ch.ChannelID})
	}
	if ch.Name != nil && *ch.Name != "" { // "" or absent: the panel shows the type
		if err := checkName(path+".name", *ch.Name, maxChannelName); err != nil {
			return nil, err
		}
	}
	// The stored channels of the type, the one at the same place first.
	var candidates []json.RawMessage
	if index < len(stored) && stored[index].Type == ch.Type {
		candidates = append(candidates, stored[index].Config)
	}
	for _, s := range stored {
		if s.Type == ch.Type && ch.Type != "" {
			candidates = append(candidates, s.Config)
		}
	}
	kept, err := a.keepSecret(path, ch.Type, ch.Config, candidates...)
	if err != nil {
		return nil, err
	}
	config, changed, err := a.checkChannelConfig(path, ch.Type, kept)
	if err != nil {
		return nil, err
	}
	if changed || !bytes.Equal(kept, ch.Config) {
		return marshal(channelOut{Type: ch.Type, Name: ch.Name, Config: config})
	}
	return item, nil
}
