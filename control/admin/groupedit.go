package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"lookout/control/alert/channel/webhook"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Group is a notification group as the API answers it: the secrets of its
// channels masked (but in the answer of the write that made a webhook
// secret, where it is shown once).
type Group struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Channels  json.RawMessage `json:"channels"`
	CreatedAt time.Time       `json:"created_at"`
}

// groupChannels reads a group's channels as stored (none when they cannot
// be read).
func groupChannels(raw []byte) []channelBody {
	var out []channelBody
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// groupOf is g as answered, the secrets of its channels masked.
func (a *API) groupOf(g *statev1.NotificationGroup) Group {
	out := Group{ID: g.GetId(), Name: g.GetName(), Channels: g.GetChannelsJson(), CreatedAt: time.UnixMilli(g.GetCreatedUnixMs()).UTC()}
	if len(out.Channels) == 0 {
		out.Channels = json.RawMessage("[]")
	}
	var items []json.RawMessage
	if json.Unmarshal(g.GetChannelsJson(), &items) != nil {
		return out
	}
	masked := make([]json.RawMessage, len(items))
	for i, item := range items {
		masked[i] = item
		var ch channelBody
		if json.Unmarshal(item, &ch) != nil || ch.ChannelID != nil || ch.Config == nil {
			continue
		}
		if m := a.maskConfig(ch.Type, ch.Config); string(m) != string(ch.Config) {
			if b, err := marshal(channelOut{Type: ch.Type, Name: ch.Name, Config: m}); err == nil {
				masked[i] = b
			}
		}
	}
	if b, err := marshal(masked); err == nil {
		out.Channels = b
	}
	return out
}

// handleListGroups serves GET /admin/v1/accounts/{id}/notification-groups.
func (a *API) handleListGroups(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := a.readable(r, id); err != nil {
		a.fail(w, r, err)
		return
	}
	list, err := a.ListGroups(id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Groups []Group `json:"notification_groups"`
	}{list})
}

// ListGroups returns the account's notification groups, their secrets
// masked.
func (a *API) ListGroups(accountID string) ([]Group, error) {
	stored, err := a.state.NotificationGroups(accountID)
	if err != nil {
		return nil, fmt.Errorf("read notification groups of %s: %w", accountID, err)
	}
	out := make([]Group, 0, len(stored))
	for _, g := range stored {
		out = append(out, a.groupOf(g))
	}
	return out, nil
}

// handleGetGroup serves GET
// /admin/v1/accounts/{id}/notification-groups/{group_id}.
func (a *API) handleGetGroup(w http.ResponseWriter, r *http.Request) {
	if err := a.readable(r, r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	g, err := a.GetGroup(r.PathValue("id"), r.PathValue("group_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, g)
}

// GetGroup returns a notification group of the account, its secrets
// masked; an unknown one is an *Error (404).
func (a *API) GetGroup(accountID, groupID string) (*Group, error) {
	g, err := a.storedGroup(accountID, groupID)
	if err != nil {
		return nil, err
	}
	out := a.groupOf(g)
	return &out, nil
}

func (a *API) storedGroup(accountID, groupID string) (*statev1.NotificationGroup, error) {
	g, err := a.state.NotificationGroup(accountID, groupID)
	if errors.Is(err, state.ErrNotFound) {
		return nil, &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "notification group " + groupID + " not found"}
	}
	if err != nil {
		return nil, fmt.Errorf("read notification group %s: %w", groupID, err)
	}
	return g, nil
}

// handlePutGroup serves PUT
// /admin/v1/accounts/{id}/notification-groups/{group_id}.
func (a *API) handlePutGroup(w http.ResponseWriter, r *http.Request) {
	var body groupBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	g, err := a.updateGroup(r.Context(), r.PathValue("id"), r.PathValue("group_id"), body)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, g)
}

// updateGroup replaces a group's name and channels with the checks of
// createGroup; a masked secret of a channel of its own keeps the stored
// one. The answer masks secrets, but one the service just made.
func (a *API) updateGroup(ctx context.Context, accountID, groupID string, body groupBody) (*Group, error) {
	if err := checkName("name", body.Name, maxGroupName); err != nil {
		return nil, err
	}
	if err := a.accountExists(accountID); err != nil {
		return nil, err
	}
	old, err := a.storedGroup(accountID, groupID)
	if err != nil {
		return nil, err
	}
	channels, err := a.checkChannels(accountID, body.Channels, groupChannels(old.GetChannelsJson()))
	if err != nil {
		return nil, err
	}
	cmd := &raftv1.Command{Op: &raftv1.Command_UpdateNotificationGroup{UpdateNotificationGroup: &raftv1.UpdateNotificationGroup{
		AccountId: accountID, GroupId: groupID, Name: body.Name, ChannelsJson: channels,
	}}}
	if err := checkCommand(cmd, "the notification group"); err != nil {
		return nil, err
	}
	if err := a.apply(ctx, cmd); err != nil {
		return nil, err
	}
	out := a.groupOf(&statev1.NotificationGroup{Id: groupID, Name: body.Name, ChannelsJson: channels, CreatedUnixMs: old.GetCreatedUnixMs()})
	out.Channels = showMadeSecrets(body.Channels, channels, out.Channels)
	return &out, nil
}

// showMadeSecrets returns masked (a group's channels as answered) with the
// webhooks that got a secret the service made, sent holding none where
// stored holds one, as stored: that secret is shown this once; every
// other secret stays masked.
func showMadeSecrets(sent, stored, masked json.RawMessage) json.RawMessage {
	var in []channelBody
	var out, shown []json.RawMessage
	if json.Unmarshal(sent, &in) != nil || json.Unmarshal(stored, &out) != nil || json.Unmarshal(masked, &shown) != nil ||
		len(in) != len(out) || len(out) != len(shown) {
		return masked
	}
	for i := range in {
		var ch channelBody
		if json.Unmarshal(out[i], &ch) != nil {
			continue
		}
		_, had := secretOf(in[i].Config, webhook.Secret)
		_, has := secretOf(ch.Config, webhook.Secret)
		if in[i].Type == webhook.Type && !had && has {
			shown[i] = out[i]
		}
	}
	b, err := marshal(shown)
	if err != nil {
		return masked
	}
	return b
}

// handleDeleteGroup serves DELETE
// /admin/v1/accounts/{id}/notification-groups/{group_id}.
func (a *API) handleDeleteGroup(w http.ResponseWriter, r *http.Request) {
	if err := a.DeleteGroup(r.Context(), r.PathValue("id"), r.PathValue("group_id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// DeleteGroup deletes a notification group of the account that no monitor
// names; its deliveries not yet made are given up. An unknown group is an
// *Error (404), one that monitors name one (409
// notification_group_in_use, naming a monitor).
func (a *API) DeleteGroup(ctx context.Context, accountID, groupID string) error {
	return a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_DeleteNotificationGroup{DeleteNotificationGroup: &raftv1.DeleteNotificationGroup{
		AccountId: accountID, GroupId: groupID,
	}}})
}
