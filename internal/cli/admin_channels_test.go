package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"lookout/control/controltest"
	"lookout/internal/client"
)

// TestAdminEditChannels lists, shows, changes and deletes channels with
// lookout admin against a node: secrets are masked and kept when an
// update leaves --config out.
func TestAdminEditChannels(t *testing.T) {
	srv := controltest.NewServer(t)
	var acct client.CreatedAccount
	mustRunAdmin(t, srv, &acct, "account", "create", "--email", "ops@example.com")
	var ch client.CreatedChannel
	mustRunAdmin(t, srv, &ch, "channel", "create", "--account", acct.ID, "--type", "telegram", "--name", "ops",
		"--config", `{"bot_token":"123456:ABCDEFGHIJKLmnop","chat_id":-1001}`)

	var list client.ChannelList
	mustRunAdmin(t, srv, &list, "channel", "list", "--account", acct.ID)
	if len(list.Channels) != 1 || compact(t, list.Channels[0].Config) != `{"bot_token":"****mnop","chat_id":-1001}` {
		t.Fatalf("list %+v", list)
	}
	var got client.AlertChannel
	mustRunAdmin(t, srv, &got, "channel", "get", ch.ID, "--account", acct.ID)
	if got.Name != "ops" || !got.Default || got.CreatedAt.IsZero() {
		t.Fatalf("get %+v", got)
	}
	// Only the name and the default flag change; the token is kept.
	mustRunAdmin(t, srv, &got, "channel", "update", ch.ID, "--account", acct.ID, "--name", "ops room", "--default=false")
	if got.Name != "ops room" || got.Default {
		t.Fatalf("update %+v", got)
	}
	stored, err := srv.Store.Channel(acct.ID, ch.ID)
	if err != nil || string(stored.GetConfigJson()) != `{"bot_token":"123456:ABCDEFGHIJKLmnop","chat_id":-1001}` || stored.GetName() != "ops room" {
		t.Fatalf("stored %v, %v", stored, err)
	}
	mustRunAdmin(t, srv, &got, "channel", "update", ch.ID, "--account", acct.ID, "--config", `{"bot_token":"****mnop","chat_id":"@opsroom"}`)
	if stored, _ := srv.Store.Channel(acct.ID, ch.ID); string(stored.GetConfigJson()) != `{"bot_token":"123456:ABCDEFGHIJKLmnop","chat_id":"@opsroom"}` || stored.GetIsDefault() {
		t.Fatalf("stored after --config %s (default %v)", stored.GetConfigJson(), stored.GetIsDefault())
	}
	_, err = runAdminTest(t, adminEnv(srv), "channel", "update", ch.ID, "--account", acct.ID, "--config", `{"chat_id":1}`)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "invalid_request" || !strings.Contains(err.Error(), "config.bot_token") {
		t.Errorf("update with a bad config: %v", err)
	}
	var history client.DeliveryList
	mustRunAdmin(t, srv, &history, "channel", "deliveries", ch.ID, "--account", acct.ID)
	if history.Deliveries == nil || len(history.Deliveries) != 0 {
		t.Errorf("deliveries %+v", history)
	}

	// Groups: one names the channel, which then cannot be deleted.
	var g client.NotificationGroup
	mustRunAdmin(t, srv, &g, "group", "create", "--account", acct.ID, "--name", "on-call", "--channels", `[{"channel_id":"`+ch.ID+`"}]`)
	if len(g.Channels) != 1 || g.Channels[0].ChannelID != ch.ID {
		t.Fatalf("group %+v", g)
	}
	_, err = runAdminTest(t, adminEnv(srv), "channel", "delete", ch.ID, "--account", acct.ID)
	if !errors.As(err, &apiErr) || apiErr.Code != "channel_in_use" {
		t.Errorf("delete a channel a group names: %v", err)
	}
	var groups client.NotificationGroupList
	mustRunAdmin(t, srv, &groups, "group", "list", "--account", acct.ID)
	if len(groups.Groups) != 1 || groups.Groups[0].Name != "on-call" {
		t.Fatalf("groups %+v", groups)
	}
	mustRunAdmin(t, srv, &g, "group", "update", g.ID, "--account", acct.ID, "--name", "pager")
	if g.Name != "pager" || len(g.Channels) != 1 {
		t.Fatalf("group update kept the channels? %+v", g)
	}
	mustRunAdmin(t, srv, &g, "group", "update", g.ID, "--account", acct.ID, "--channels", `[]`)
	mustRunAdmin(t, srv, &g, "group", "get", g.ID, "--account", acct.ID)
	if g.Name != "pager" || len(g.Channels) != 0 {
		t.Fatalf("group %+v", g)
	}
	for _, args := range [][]string{{"group", "delete", g.ID}, {"channel", "delete", ch.ID}} {
		out, err := runAdminTest(t, adminEnv(srv), append(args, "--account", acct.ID)...)
		if err != nil || out != "" {
			t.Fatalf("%v: %q, %v", args, out, err)
		}
	}
	_, err = runAdminTest(t, adminEnv(srv), "channel", "get", ch.ID, "--account", acct.ID)
	if !errors.As(err, &apiErr) || apiErr.Code != "not_found" {
		t.Errorf("get a deleted channel: %v", err)
	}
	// Usage errors.
	for _, args := range [][]string{
		{"channel", "get", ch.ID},
		{"channel", "update", "--account", acct.ID},
		{"group", "update", g.ID, "--account", acct.ID, "--channels", `{}`},
	} {
		_, err := runAdminTest(t, adminEnv(srv), args...)
		var u usageError
		if !errors.As(err, &u) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// compact is raw without insignificant white space (the CLI indents).
func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
