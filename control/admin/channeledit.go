package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Channel is an alert channel as the API answers it, its secret masked
// (but in the answer of the write that made a webhook secret, where it is
// shown once).
type Channel struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Default   bool            `json:"default"`
	Config    json.RawMessage `json:"config"`
	CreatedAt time.Time       `json:"created_at"`
}

// channelOf is c as answered, its secret masked.
func (a *API) channelOf(c *statev1.Channel) Channel {
	return Channel{
		ID: c.GetId(), Type: c.GetType(), Name: c.GetName(), Default: c.GetIsDefault(),
		Config: a.maskConfig(c.GetType(), c.GetConfigJson()), CreatedAt: time.UnixMilli(c.GetCreatedUnixMs()).UTC(),
	}
}

// readable confirms a read (a consistent one unless the query says
// stale=true) and that the account exists.
func (a *API) readable(r *http.Request, accountID string) error {
	stale := r.URL.Query().Get("stale") == "true"
	if !stale {
		if err := a.cluster.ConsistentRead(r.Context()); err != nil {
			return fmt.Errorf("consistent read: %w", err)
		}
	}
	return a.accountExists(accountID)
}

// accountExists is nil when the account exists, else an *Error (404).
func (a *API) accountExists(accountID string) error {
	if _, err := a.state.Account(accountID); errors.Is(err, state.ErrNotFound) {
		return &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "account " + accountID + " not found"}
	} else if err != nil {
		return fmt.Errorf("read account %s: %w", accountID, err)
	}
	return nil
}

// handleListChannels serves GET /admin/v1/accounts/{id}/channels.
func (a *API) handleListChannels(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := a.readable(r, id); err != nil {
		a.fail(w, r, err)
		return
	}
	list, err := a.ListChannels(id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Channels []Channel `json:"channels"`
	}{list})
}

// ListChannels returns the account's channels, their secrets masked.
func (a *API) ListChannels(accountID string) ([]Channel, error) {
	stored, err := a.state.Channels(accountID)
	if err != nil {
		return nil, fmt.Errorf("read channels of %s: %w", accountID, err)
	}
	out := make([]Channel, 0, len(stored))
	for _, c := range stored {
		out = append(out, a.channelOf(c))
	}
	return out, nil
}

// handleGetChannel serves GET /admin/v1/accounts/{id}/channels/{channel_id}.
func (a *API) handleGetChannel(w http.ResponseWriter, r *http.Request) {
	if err := a.readable(r, r.PathValue("id")); err != nil {
		a.fail(w, r, err)
		return
	}
	c, err := a.GetChannel(r.PathValue("id"), r.PathValue("channel_id"))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// GetChannel returns a channel of the account, its secret masked; an
// unknown one is an *Error (404).
func (a *API) GetChannel(accountID, channelID string) (*Channel, error) {
	c, err := a.storedChannel(accountID, channelID)
	if err != nil {
		return nil, err
	}
	out := a.channelOf(c)
	return &out, nil
}

func (a *API) storedChannel(accountID, channelID string) (*statev1.Channel, error) {
	c, err := a.state.Channel(accountID, channelID)
	if errors.Is(err, state.ErrNotFound) {
		return nil, &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "channel " + channelID + " not found"}
	}
	if err != nil {
		return nil, fmt.Errorf("read channel %s: %w", channelID, err)
	}
	return c, nil
}

// handlePutChannel serves PUT /admin/v1/accounts/{id}/channels/{channel_id}.
func (a *API) handlePutChannel(w http.ResponseWriter, r *http.Request) {
	var body createChannelBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	c, err := a.updateChannel(r.Context(), r.PathValue("id"), r.PathValue("channel_id"), body)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// updateChannel replaces a channel's type, name and config with the
// checks of createChannel; default left out keeps the channel's. A masked
// secret that is the stored one's keeps it. The answer masks the secret
// unless the service just made it (a webhook without one).
func (a *API) updateChannel(ctx context.Context, accountID, channelID string, body createChannelBody) (*Channel, error) {
	if err := checkName("name", body.Name, maxChannelName); err != nil {
		return nil, err
	}
	if err := a.accountExists(accountID); err != nil {
		return nil, err
	}
	old, err := a.storedChannel(accountID, channelID)
	if err != nil {
		return nil, err
	}
	config := body.Config
	if old.GetType() == body.Type {
		if config, err = a.keepSecret("", body.Type, config, old.GetConfigJson()); err != nil {
			return nil, err
		}
	} else if config, err = a.keepSecret("", body.Type, config); err != nil {
		return nil, err
	}
	config, made, err := a.checkChannelConfig("", body.Type, config)
	if err != nil {
		return nil, err
	}
	compact, err := compactJSON(config)
	if err != nil {
		return nil, err
	}
	isDefault := old.GetIsDefault()
	if body.Default != nil {
		isDefault = *body.Default
	}
	cmd := &raftv1.Command{Op: &raftv1.Command_UpdateChannel{UpdateChannel: &raftv1.UpdateChannel{
		AccountId: accountID, ChannelId: channelID, Type: body.Type, Name: body.Name, ConfigJson: compact, IsDefault: isDefault,
	}}}
	if err := checkCommand(cmd, "the channel"); err != nil {
		return nil, err
	}
	if err := a.apply(ctx, cmd); err != nil {
		return nil, err
	}
	out := a.channelOf(&statev1.Channel{Id: channelID, Type: body.Type, Name: body.Name, ConfigJson: compact, IsDefault: isDefault, CreatedUnixMs: old.GetCreatedUnixMs()})
	if made {
		out.Config = compact
	}
	return &out, nil
}

// handleDeleteChannel serves DELETE
// /admin/v1/accounts/{id}/channels/{channel_id}.
func (a *API) handleDeleteChannel(w http.ResponseWriter, r *http.Request) {
	if err := a.DeleteChannel(r.Context(), r.PathValue("id"), r.PathValue("channel_id")); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// DeleteChannel deletes a channel of the account; its deliveries not yet
// made are given up. An unknown channel is an *Error (404), one that a
// notification group names one (409 channel_in_use).
func (a *API) DeleteChannel(ctx context.Context, accountID, channelID string) error {
	return a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_DeleteChannel{DeleteChannel: &raftv1.DeleteChannel{
		AccountId: accountID, ChannelId: channelID,
	}}})
}
