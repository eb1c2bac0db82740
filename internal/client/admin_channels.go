package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// AlertChannel is an alert channel of an account as read back: the
// secret of its config masked ("****" and its last 4 characters), except
// in the answer of a write that made a webhook secret.
type AlertChannel struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Default   bool            `json:"default"`
	Config    json.RawMessage `json:"config"`
	CreatedAt time.Time       `json:"created_at"`
}

// ChannelList is the answer of ListChannels.
type ChannelList struct {
	Channels []AlertChannel `json:"channels"`
}

// NotificationGroupList is the answer of ListNotificationGroups.
type NotificationGroupList struct {
	Groups []NotificationGroup `json:"notification_groups"`
}

// Delivery is one alert's delivery through a channel. Status is retrying,
// delivered, failed (refused for good) or given_up.
type Delivery struct {
	AlertID    string    `json:"alert_id"`
	AlertType  string    `json:"alert_type"`
	OccurredAt time.Time `json:"occurred_at"`
	Monitor    struct {
		UUID string `json:"uuid,omitempty"`
		Name string `json:"name"`
	} `json:"monitor"`
	Status        string    `json:"status"`
	Error         string    `json:"error,omitempty"`
	Attempts      int64     `json:"attempts"`
	LastAttemptAt time.Time `json:"last_attempt_at"`
}

// DeliveryList is a channel's delivery history, newest alert first.
type DeliveryList struct {
	Deliveries []Delivery `json:"deliveries"`
}

func channelPath(accountID, channelID string) string {
	return "/admin/v1/accounts/" + url.PathEscape(accountID) + "/channels/" + url.PathEscape(channelID)
}

func groupPath(accountID, groupID string) string {
	return "/admin/v1/accounts/" + url.PathEscape(accountID) + "/notification-groups/" + url.PathEscape(groupID)
}

// ListChannels lists the alert channels of an account.
func (a *Admin) ListChannels(ctx context.Context, accountID string) (*ChannelList, error) {
	var out ChannelList
	if err := a.t.do(ctx, http.MethodGet, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/channels", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetChannel reads an alert channel of an account.
func (a *Admin) GetChannel(ctx context.Context, accountID, channelID string) (*AlertChannel, error) {
	var out AlertChannel
	if err := a.t.do(ctx, http.MethodGet, channelPath(accountID, channelID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateChannel replaces an alert channel's type, name and config (a nil
// Default keeps the channel's). A masked secret, as read, keeps the
// stored one.
func (a *Admin) UpdateChannel(ctx context.Context, accountID, channelID string, req CreateChannelRequest) (*AlertChannel, error) {
	var out AlertChannel
	if err := a.t.do(ctx, http.MethodPut, channelPath(accountID, channelID), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteChannel deletes an alert channel; its deliveries not yet made are
// given up. A channel that a notification group names is an *APIError
// 409 channel_in_use.
func (a *Admin) DeleteChannel(ctx context.Context, accountID, channelID string) error {
	return a.t.do(ctx, http.MethodDelete, channelPath(accountID, channelID), nil, nil)
}

// ChannelDeliveries reads a channel's delivery history (the newest 100).
func (a *Admin) ChannelDeliveries(ctx context.Context, accountID, channelID string) (*DeliveryList, error) {
	var out DeliveryList
	if err := a.t.do(ctx, http.MethodGet, channelPath(accountID, channelID)+"/deliveries", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListNotificationGroups lists the notification groups of an account.
func (a *Admin) ListNotificationGroups(ctx context.Context, accountID string) (*NotificationGroupList, error) {
	var out NotificationGroupList
	if err := a.t.do(ctx, http.MethodGet, "/admin/v1/accounts/"+url.PathEscape(accountID)+"/notification-groups", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetNotificationGroup reads a notification group of an account.
func (a *Admin) GetNotificationGroup(ctx context.Context, accountID, groupID string) (*NotificationGroup, error) {
	var out NotificationGroup
	if err := a.t.do(ctx, http.MethodGet, groupPath(accountID, groupID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateNotificationGroup replaces a notification group's name and
// channels. A group that monitors name keeps its name (*APIError 409
// notification_group_in_use).
func (a *Admin) UpdateNotificationGroup(ctx context.Context, accountID, groupID string, req CreateNotificationGroupRequest) (*NotificationGroup, error) {
	if req.Channels == nil {
		req.Channels = []Channel{}
	}
	var out NotificationGroup
	if err := a.t.do(ctx, http.MethodPut, groupPath(accountID, groupID), req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteNotificationGroup deletes a notification group that no monitor
// names (else *APIError 409 notification_group_in_use).
func (a *Admin) DeleteNotificationGroup(ctx context.Context, accountID, groupID string) error {
	return a.t.do(ctx, http.MethodDelete, groupPath(accountID, groupID), nil, nil)
}
