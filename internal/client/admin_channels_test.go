package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"lookout/internal/client"
)

// TestEditChannelsAndGroups reads, changes and deletes channels and
// groups through the client.
func TestEditChannelsAndGroups(t *testing.T) {
	ctx := context.Background()
	c, _ := newAdmin(t)
	acct, err := c.CreateAccount(ctx, client.CreateAccountRequest{Email: "ops@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.CreateChannel(ctx, acct.ID, client.CreateChannelRequest{Type: "pagerduty", Name: "pager", Config: json.RawMessage(`{"routing_key":"R0UT1NGKEY0123456789abcd"}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetChannel(ctx, acct.ID, ch.ID)
	if err != nil || string(got.Config) != `{"routing_key":"****abcd"}` || got.CreatedAt.IsZero() {
		t.Fatalf("get: %+v %s, %v", got, got.Config, err)
	}
	// Send back what was read, renamed: the key is kept.
	upd, err := c.UpdateChannel(ctx, acct.ID, ch.ID, client.CreateChannelRequest{Type: got.Type, Name: "pager 2", Config: got.Config})
	if err != nil || upd.Name != "pager 2" || !upd.Default {
		t.Fatalf("update: %+v, %v", upd, err)
	}
	list, err := c.ListChannels(ctx, acct.ID)
	if err != nil || len(list.Channels) != 1 || list.Channels[0].Name != "pager 2" {
		t.Fatalf("list: %+v, %v", list, err)
	}
	if h, err := c.ChannelDeliveries(ctx, acct.ID, ch.ID); err != nil || h.Deliveries == nil || len(h.Deliveries) != 0 {
		t.Fatalf("deliveries: %+v, %v", h, err)
	}

	g, err := c.CreateNotificationGroup(ctx, acct.ID, client.CreateNotificationGroupRequest{Name: "on-call", Channels: []client.Channel{{ChannelID: ch.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *client.APIError
	if err := c.DeleteChannel(ctx, acct.ID, ch.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusConflict || apiErr.Code != "channel_in_use" {
		t.Fatalf("delete a channel a group names: %v", err)
	}
	gu, err := c.UpdateNotificationGroup(ctx, acct.ID, g.ID, client.CreateNotificationGroupRequest{Name: "pager"})
	if err != nil || gu.Name != "pager" || len(gu.Channels) != 0 {
		t.Fatalf("update group: %+v, %v", gu, err)
	}
	if gl, err := c.ListNotificationGroups(ctx, acct.ID); err != nil || len(gl.Groups) != 1 || gl.Groups[0].CreatedAt == "" {
		t.Fatalf("list groups: %+v, %v", gl, err)
	}
	if err := c.DeleteNotificationGroup(ctx, acct.ID, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetNotificationGroup(ctx, acct.ID, g.ID); !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("get a deleted group: %v", err)
	}
	if err := c.DeleteChannel(ctx, acct.ID, ch.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetChannel(ctx, acct.ID, ch.ID); !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "not found") {
		t.Fatalf("get a deleted channel: %v", err)
	}
}
