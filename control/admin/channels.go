package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/webhook"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/netguard"
)

// maxChannelName bounds a channel's name, in characters.
const maxChannelName = 100

// testTimeout bounds a test message's delivery.
const testTimeout = 30 * time.Second

// createChannelBody is the JSON of POST /admin/v1/accounts/{id}/channels.
// Default is true when absent.
type createChannelBody struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Config  json.RawMessage `json:"config"`
	Default *bool           `json:"default"`
}

// ChannelCreated is the answer; a webhook secret the service made is
// shown only here.
type ChannelCreated struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Default bool            `json:"default"`
	Config  json.RawMessage `json:"config"`
}

// handleCreateChannel serves POST /admin/v1/accounts/{id}/channels.
func (a *API) handleCreateChannel(w http.ResponseWriter, r *http.Request) {
	var body createChannelBody
	if err := decodeBody(w, r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	created, err := a.createChannel(r.Context(), r.PathValue("id"), body)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, created)
}

func (a *API) createChannel(ctx context.Context, accountID string, body createChannelBody) (*ChannelCreated, error) {
	if err := checkName("name", body.Name, maxChannelName); err != nil {
		return nil, err
	}
	config, _, err := a.checkChannelConfig("", body.Type, body.Config)
	if err != nil {
		return nil, err
	}
	compact, err := compactJSON(config)
	if err != nil {
		return nil, err
	}
	isDefault := body.Default == nil || *body.Default
	id := uuid.NewString()
	cmd := &raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId:  accountID,
		ChannelId:  id,
		Type:       body.Type,
		Name:       body.Name,
		ConfigJson: compact,
		IsDefault:  isDefault,
	}}}
	if err := checkCommand(cmd, "the channel"); err != nil {
		return nil, err
	}
	if err = a.apply(ctx, cmd); err != nil {
		return nil, err
	}
	return &ChannelCreated{ID: id, Type: body.Type, Name: body.Name, Default: isDefault, Config: compact}, nil
}

// compactJSON is raw without insignificant white space.
func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("compact config: %w", err)
	}
	return b.Bytes(), nil
}

// checkChannelConfig checks the type and config of the channel object at
// path ("" for the request body) with the channel registry. A webhook
// without a secret gets one: the config returned holds it and changed
// is true. A null or absent config is {}.
func (a *API) checkChannelConfig(path, typ string, config json.RawMessage) (_ json.RawMessage, changed bool, _ error) {
	if typ == "" {
		return nil, false, invalidField(joinPath(path, "type"), "required: one of "+strings.Join(a.channels.Types(), ", "))
	}
	if !a.channels.Has(typ) {
		return nil, false, invalidField(joinPath(path, "type"), "must be one of "+strings.Join(a.channels.Types(), ", "))
	}
	field := joinPath(path, "config")
	config = bytes.TrimSpace(config)
	if len(config) == 0 || string(config) == "null" {
		config = json.RawMessage("{}")
	}
	if config[0] != '{' {
		return nil, false, invalidField(field, "must be an object")
	}
	if typ == webhook.Type {
		var err error
		if config, changed, err = addWebhookSecret(config); err != nil {
			return nil, false, invalidField(field, "must be an object")
		}
	}
	if err := a.channels.Validate(typ, config); err != nil {
		var ce *channel.ConfigError
		switch {
		case errors.As(err, &ce) && ce.Field != "":
			return nil, false, invalidField(field+"."+ce.Field, ce.Reason)
		case errors.As(err, &ce):
			return nil, false, invalidField(field, ce.Reason)
		default:
			return nil, false, invalidField(field, err.Error())
		}
	}
	return config, changed, nil
}

// addWebhookSecret gives a webhook config without a secret (absent, null
// or "") a new one: "whsec_" and the base64 of 32 random bytes, the
// Standard Webhooks form.
func addWebhookSecret(config json.RawMessage) (json.RawMessage, bool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(config, &fields); err != nil {
		return nil, false, err
	}
	if s := string(bytes.TrimSpace(fields["secret"])); s != "" && s != "null" && s != `""` {
		return config, false, nil
	}
	key := make([]byte, 32)
	rand.Read(key)
	secret, err := json.Marshal("whsec_" + base64.StdEncoding.EncodeToString(key))
	if err != nil {
		return nil, false, err
	}
	if fields == nil {
		fields = map[string]json.RawMessage{}
	}
	fields["secret"] = secret
	out, err := marshal(fields)
	return out, true, err
}

// marshal is JSON without HTML escapes, so configs are stored as sent.
func marshal(v any) (json.RawMessage, error) {
	b, err := channel.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode channel: %w", err)
	}
	return b, nil
}

// handleTestChannel serves POST
// /admin/v1/accounts/{id}/channels/{channel_id}/test: it sends a test
// message through the channel now and answers whether the receiver took
// it.
func (a *API) handleTestChannel(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	err := a.TestChannel(r.Context(), r.PathValue("id"), r.PathValue("channel_id"), scheme+"://"+r.Host+"/")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Delivered bool `json:"delivered"`
	}{true})
}

// TestChannel sends a test message through the account's channel now,
// linking to panelURL. An unknown account or channel is an *Error (404), a
// message the receiver did not take an *Error (502) saying why.
func (a *API) TestChannel(ctx context.Context, accountID, channelID, panelURL string) error {
	if err := a.cluster.ConsistentRead(ctx); err != nil {
		return fmt.Errorf("consistent read: %w", err)
	}
	if _, err := a.state.Account(accountID); errors.Is(err, state.ErrNotFound) {
		return &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "account " + accountID + " not found"}
	} else if err != nil {
		return fmt.Errorf("read account %s: %w", accountID, err)
	}
	stored, err := a.state.Channel(accountID, channelID)
	if errors.Is(err, state.ErrNotFound) {
		return &Error{Status: http.StatusNotFound, Code: codeNotFound, Message: "channel " + channelID + " not found"}
	}
	if err != nil {
		return fmt.Errorf("read channel %s: %w", channelID, err)
	}
	ch, err := a.channels.New(stored.GetType(), stored.GetConfigJson())
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, testTimeout)
		defer cancel()
		err = ch.Send(ctx, a.testAlert(panelURL, accountID))
	}
	if err != nil {
		a.log.Debug("test message not delivered", "account", accountID, "channel", channelID, "error", err)
		msg := err.Error()
		var refused *netguard.Error
		if errors.As(err, &refused) {
			// The reason alone, as a check's error says it.
			msg = refused.Error()
		}
		return &Error{Status: http.StatusBadGateway, Code: codeDeliveryFailed, Message: msg}
	}
	return nil
}

// testAlert is the message of a channel test: a fixed fake monitor,
// linking to panelURL.
func (a *API) testAlert(panelURL, accountID string) channel.Alert {
	return channel.Alert{
		ID:         uuid.NewString(),
		Type:       channel.Test,
		OccurredAt: a.now(),
		AccountID:  accountID,
		Monitor: channel.Monitor{
			UUID: "00000000-0000-0000-0000-000000000000",
			Kind: "ping",
			Name: "lookout-test",
			Tags: []string{},
		},
		PanelURL: panelURL,
	}
}
