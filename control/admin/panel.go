package admin

import (
	"context"
	"encoding/json"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// The operator API's writes for one account, as Go calls: the web panel
// (control/panel) makes keys, channels and groups with the same checks
// and commands as /admin/v1, for the signed-in account only.

// KeyRequest asks for a named key: Type is ingest or management; nil
// Scopes on a management key means all three.
type KeyRequest struct {
	Type   string
	Name   string
	Scopes []string
}

// CreateKey makes a named key of the account; its secret is only in the
// answer.
func (a *API) CreateKey(ctx context.Context, accountID string, req KeyRequest) (*KeyCreated, error) {
	return a.createKey(ctx, accountID, keyBody(req))
}

// RevokeKey revokes a key of the account; a key of another account is an
// *Error (404).
func (a *API) RevokeKey(ctx context.Context, accountID, keyID string) error {
	return a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_RevokeKey{RevokeKey: &raftv1.RevokeKey{
		AccountId: accountID,
		KeyId:     keyID,
	}}})
}

// ChannelRequest asks for an alert channel; Config is the type's JSON
// object.
type ChannelRequest struct {
	Type    string
	Name    string
	Config  json.RawMessage
	Default bool
}

// CreateChannel validates the config with the channel registry and saves
// the channel.
func (a *API) CreateChannel(ctx context.Context, accountID string, req ChannelRequest) (*ChannelCreated, error) {
	return a.createChannel(ctx, accountID, createChannelBody{Type: req.Type, Name: req.Name, Config: req.Config, Default: &req.Default})
}

// CreateGroup saves a notification group; channels is a JSON array of
// {type, name, config} objects (empty: none).
func (a *API) CreateGroup(ctx context.Context, accountID, name string, channels json.RawMessage) (*GroupCreated, error) {
	return a.createGroup(ctx, accountID, groupBody{Name: name, Channels: channels})
}

// UpdateChannel replaces a channel of the account as PUT
// /admin/v1/accounts/{id}/channels/{channel_id} does: a masked secret
// that is the stored one's keeps it.
func (a *API) UpdateChannel(ctx context.Context, accountID, channelID string, req ChannelRequest) (*Channel, error) {
	return a.updateChannel(ctx, accountID, channelID, createChannelBody{Type: req.Type, Name: req.Name, Config: req.Config, Default: &req.Default})
}

// UpdateGroup replaces a notification group's name and channels as PUT
// /admin/v1/accounts/{id}/notification-groups/{group_id} does.
func (a *API) UpdateGroup(ctx context.Context, accountID, groupID, name string, channels json.RawMessage) (*Group, error) {
	return a.updateGroup(ctx, accountID, groupID, groupBody{Name: name, Channels: channels})
}

// ChannelTypes are the alert channel types the node can send to.
func (a *API) ChannelTypes() []string { return a.channels.Types() }
