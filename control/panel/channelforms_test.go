package panel_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"lookout/control/admin"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// fieldError is the error shown next to the form field named key: the
// label holding the field, up to its end.
func fieldError(t *testing.T, body, key string) string {
	t.Helper()
	re := regexp.MustCompile(`name="` + regexp.QuoteMeta(key) + `"(?s:.*?)</label>`)
	label := re.FindString(body)
	m := regexp.MustCompile(`<span class="error field-error" role="alert">([^<]*)</span>`).FindStringSubmatch(label)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestChannelFormPerType: each channel type's form makes that type's
// config, and a refused setting is shown next to its field, with the
// operator API's reason; nothing is stored then.
func TestChannelFormPerType(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	p := b.get("/channels")
	for _, typ := range []string{"email", "slack", "discord", "teams", "pagerduty", "opsgenie", "telegram", "webhook"} {
		if !strings.Contains(p.Body, `<fieldset class="type-fields" data-type="`+typ+`">`) {
			t.Errorf("no fieldset for %s", typ)
		}
	}
	for _, tc := range []struct {
		typ    string
		fields url.Values
		key    string // the field the refusal is next to
		reason string
	}{
		{"email", url.Values{"email.to": {"ops@example.com\nnot an address"}}, "email.to", "&#34;not an address&#34; is not an e-mail address."},
		{"email", url.Values{}, "email.to", "Must list at least one address."},
		{"slack", url.Values{"slack.webhook_url": {"hooks.slack.com/x"}}, "slack.webhook_url", "Must be an absolute http or https URL."},
		{"discord", url.Values{}, "discord.webhook_url", "Is required."},
		{"teams", url.Values{"teams.webhook_url": {"https://x.logic.azure.com/w"}, "teams.api_url": {"https://proxy.example.com/?a=b"}}, "teams.api_url", "Must not have a query or fragment."},
		{"pagerduty", url.Values{}, "pagerduty.routing_key", "Is required."},
		{"opsgenie", url.Values{"opsgenie.region": {"asia"}, "opsgenie.api_key": {"k"}}, "opsgenie.region", "Must be &#34;us&#34; or &#34;eu&#34;."},
		{"telegram", url.Values{"telegram.bot_token": {"1:a"}}, "telegram.chat_id", "Is required."},
		{"webhook", url.Values{"webhook.url": {"ftp://example.com"}}, "webhook.url", "Must be an absolute http or https URL."},
		{"webhook", url.Values{"webhook.url": {"https://example.com/h"}, "webhook.secret": {"not base64!"}}, "webhook.secret", "Must be base64"},
	} {
		form := url.Values{"type": {tc.typ}, "name": {"x"}}
		for k, v := range tc.fields {
			form[k] = v
		}
		p := b.post("/channels", form)
		p.want(t, http.StatusBadRequest, "The channel was not saved")
		if got := fieldError(t, p.Body, tc.key); !strings.HasPrefix(got, tc.reason) {
			t.Errorf("%s %v: error next to %s is %q, want %q...", tc.typ, tc.fields, tc.key, got, tc.reason)
		}
		// What was typed is kept.
		for k, v := range tc.fields {
			if k != "opsgenie.region" && !strings.Contains(p.Body, v[0]) { // a select keeps only its options
				t.Errorf("%s: %s=%q is not kept", tc.typ, k, v[0])
			}
		}
	}
	p = b.post("/channels", url.Values{"type": {"sms"}, "name": {"x"}})
	p.want(t, http.StatusBadRequest)
	if got := fieldError(t, p.Body, "type"); !strings.HasPrefix(got, "Must be one of") {
		t.Errorf("type error %q", got)
	}
	if got := fieldError(t, b.post("/channels", url.Values{"type": {"slack"}, "slack.webhook_url": {"https://hooks.slack.com/x"}}).Body, "name"); got != "Required." {
		t.Errorf("name error %q", got)
	}
	if chans, _ := n.Store.Channels(a.ID); len(chans) != 0 {
		t.Fatalf("refused channels stored: %v", chans)
	}

	// Each type's settings become its config.
	for _, tc := range []struct {
		typ    string
		fields url.Values
		config string
	}{
		{"email", url.Values{"email.to": {"ops@example.com\nOn Call <oncall@example.com>, dev@example.com"}}, `{"to":["ops@example.com","On Call <oncall@example.com>","dev@example.com"]}`},
		{"slack", url.Values{"slack.webhook_url": {"https://hooks.slack.com/services/T/B/X?a=1&b=2"}}, `{"webhook_url":"https://hooks.slack.com/services/T/B/X?a=1&b=2"}`},
		{"opsgenie", url.Values{"opsgenie.api_key": {"key"}, "opsgenie.region": {"eu"}, "opsgenie.api_url": {"https://proxy.example.com"}}, `{"api_key":"key","api_url":"https://proxy.example.com","region":"eu"}`},
		{"telegram", url.Values{"telegram.bot_token": {"1:a"}, "telegram.chat_id": {"-1001"}}, `{"bot_token":"1:a","chat_id":-1001}`},
		{"telegram", url.Values{"telegram.bot_token": {"1:a"}, "telegram.chat_id": {"@opsroom"}}, `{"bot_token":"1:a","chat_id":"@opsroom"}`},
		{"webhook", url.Values{"webhook.url": {"https://example.com/h"}, "webhook.secret": {"whsec_c2VjcmV0"}}, `{"secret":"whsec_c2VjcmV0","url":"https://example.com/h"}`},
	} {
		form := url.Values{"type": {tc.typ}, "name": {tc.typ + " " + tc.fields.Encode()[:8]}}
		for k, v := range tc.fields {
			form[k] = v
		}
		// Settings of the other types, left in the form, are ignored.
		form.Set("pagerduty.routing_key", "ignored")
		p := b.post("/channels", form)
		p.want(t, http.StatusCreated, "created.")
		if tc.typ == "webhook" && strings.Contains(p.Body, `id="secret"`) {
			t.Errorf("a secret typed in is shown as made:\n%s", p.Body)
		}
		found := false
		chans, _ := n.Store.Channels(a.ID)
		for _, c := range chans {
			found = found || c.GetName() == form.Get("name") && string(c.GetConfigJson()) == tc.config
		}
		if !found {
			t.Errorf("%s: no channel with config %s in %v", tc.typ, tc.config, chans)
		}
	}
}

// TestEditChannel: a channel's page shows its settings with the secret
// masked; saving them as shown keeps the secret; a refused change is shown
// next to its field.
func TestEditChannel(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	b.get("/channels")
	const pd = "R0UT1NGKEY0123456789abcd"
	b.post("/channels", url.Values{"type": {"pagerduty"}, "name": {"pager"}, "pagerduty.routing_key": {pd}, "default": {"on"}}).want(t, http.StatusCreated)
	chans, _ := n.Store.Channels(a.ID)
	id := chans[0].GetId()
	p := b.get("/channels/" + id)
	p.want(t, http.StatusOK, `<h1>pager`, `name="pagerduty.routing_key" value="****abcd"`, "Nothing sent through this channel yet.", `action="/channels/`+id+`/delete"`)
	if strings.Contains(p.Body, pd) {
		t.Fatalf("the page shows the routing key:\n%s", p.Body)
	}
	// Saved as shown, with a new name and not default: the key is kept.
	b.post("/channels/"+id, url.Values{"type": {"pagerduty"}, "name": {"pager 2"}, "pagerduty.routing_key": {"****abcd"}}).
		want(t, http.StatusOK, "Channel pager 2 saved.")
	c, _ := n.Store.Channel(a.ID, id)
	if string(c.GetConfigJson()) != `{"routing_key":"`+pd+`"}` || c.GetName() != "pager 2" || c.GetIsDefault() {
		t.Fatalf("stored %v", c)
	}
	p = b.post("/channels/"+id, url.Values{"type": {"pagerduty"}, "name": {"pager 2"}, "pagerduty.routing_key": {"****wxyz"}})
	p.want(t, http.StatusBadRequest, "The channel was not saved")
	if got := fieldError(t, p.Body, "pagerduty.routing_key"); !strings.HasPrefix(got, "A masked value") {
		t.Errorf("error next to the key: %q", got)
	}
	// Another type: a webhook gets a secret, shown once.
	p = b.post("/channels/"+id, url.Values{"type": {"webhook"}, "name": {"hook"}, "webhook.url": {"https://example.com/h"}})
	p.want(t, http.StatusOK, "Channel hook saved.", `id="secret">whsec_`)
	// As the page shows it: html/template writes a "+" of the base64 as &#43;.
	secret := html.UnescapeString(regexp.MustCompile(`id="secret">(whsec_[^<]+)<`).FindStringSubmatch(p.Body)[1])
	if p := b.get("/channels/" + id); strings.Contains(p.Body, secret) {
		t.Fatalf("the secret is shown again")
	}

	// A delivery shows in the history.
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"fail"}`)
	pending, _ := n.Store.PendingAlerts(0)
	if len(pending) != 0 {
		t.Fatalf("the channel is no longer default: %v", pending)
	}
	b.post("/channels/"+id, url.Values{"type": {"webhook"}, "name": {"hook"}, "webhook.url": {"https://example.com/h"}, "webhook.secret": {"****" + secret[len(secret)-4:]}, "default": {"on"}}).
		want(t, http.StatusOK)
	n.ping(a, `{"event_type":"ping","monitor":"etl","status":"fail"}`)
	pending, _ = n.Store.PendingAlerts(0)
	if len(pending) != 1 {
		t.Fatalf("pending %v", pending)
	}
	n.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_RecordDelivery{RecordDelivery: &raftv1.RecordDelivery{
		AlertId: pending[0].GetId(), ChannelRef: "chan:" + id, Error: "webhook: receiver answered 404 Not Found", GiveUp: true, Permanent: true}}})
	b.get("/channels/"+id).want(t, http.StatusOK, "monitor.failed", `<a href="/monitors/`+pending[0].GetMonitorUuid()+`">etl</a>`,
		`<span class="pill red">failed</span>`, "webhook: receiver answered 404 Not Found")

	// Another account sees none of it.
	ob := n.browser()
	ob.signIn(n.signUp("other@example.com", nil))
	ob.get("/channels/"+id).want(t, http.StatusNotFound)
	ob.get("/channels")
	ob.post("/channels/"+id, url.Values{"type": {"webhook"}, "name": {"x"}, "webhook.url": {"https://example.com/h"}}).want(t, http.StatusNotFound)
	ob.post("/channels/"+id+"/delete", url.Values{"confirm_name": {"hook"}}).want(t, http.StatusNotFound)
	if _, err := n.Store.Channel(a.ID, id); err != nil {
		t.Fatal(err)
	}
}

// TestDeleteChannelAndGroup: deleting asks for the name, as deleting a
// monitor does; a channel a group names and a group monitors name are
// not deleted, and the page says why.
func TestDeleteChannelAndGroup(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	b.get("/channels")
	b.post("/channels", url.Values{"type": {"slack"}, "name": {"ops chat"}, "slack.webhook_url": {"https://hooks.slack.com/x"}}).want(t, http.StatusCreated)
	b.post("/channels", url.Values{"type": {"slack"}, "name": {"dev chat"}, "slack.webhook_url": {"https://hooks.slack.com/y"}}).want(t, http.StatusCreated)
	chans, _ := n.Store.Channels(a.ID)
	ids := map[string]string{}
	for _, c := range chans {
		ids[c.GetName()] = c.GetId()
	}
	b.post("/groups", url.Values{"name": {"on-call"}, "channel": {ids["ops chat"]}}).want(t, http.StatusCreated, "ops chat (slack)")
	groups, _ := n.Store.NotificationGroups(a.ID)
	gid := groups[0].GetId()
	if string(groups[0].GetChannelsJson()) != `[{"channel_id":"`+ids["ops chat"]+`"}]` {
		t.Fatalf("group channels %s", groups[0].GetChannelsJson())
	}

	b.post("/channels/"+ids["ops chat"]+"/delete", url.Values{"confirm_name": {"ops"}}).want(t, http.StatusUnprocessableEntity, "To delete, type the channel&#39;s name, ops chat, exactly.")
	b.post("/channels/"+ids["ops chat"]+"/delete", url.Values{"confirm_name": {"ops chat"}}).
		want(t, http.StatusConflict, "Not deleted: the channel is in notification group &#34;on-call&#34;")
	p := b.post("/channels/"+ids["dev chat"]+"/delete", url.Values{"confirm_name": {"dev chat"}})
	if p.Status != http.StatusSeeOther || p.Location != "/channels?deleted=dev+chat" {
		t.Fatalf("delete: %d %s", p.Status, p.Location)
	}
	b.get("/channels?deleted=dev+chat").want(t, http.StatusOK, "Deleted dev chat.")
	if _, err := n.Store.Channel(a.ID, ids["dev chat"]); err == nil {
		t.Fatal("channel still there")
	}

	// The group: edit its name and channels, then delete it.
	p = b.get("/groups/" + gid)
	p.want(t, http.StatusOK, `<h1>on-call`, `name="channel" value="`+ids["ops chat"]+`" checked`)
	b.post("/groups/"+gid, url.Values{"name": {"pager"}}).want(t, http.StatusOK, "Notification group pager saved.")
	if g, _ := n.Store.NotificationGroup(a.ID, gid); g.GetName() != "pager" || string(g.GetChannelsJson()) != `[]` {
		t.Fatalf("group %v", g)
	}
	b.post("/groups/"+gid, url.Values{"name": {""}, "channel": {ids["ops chat"]}}).want(t, http.StatusBadRequest, "Required.")
	b.post("/groups/"+gid, url.Values{"name": {"pager"}, "channel": {ids["ops chat"]}}).want(t, http.StatusOK)
	if status, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"backup","timeout_seconds":60,"notification_group":"pager"}`); status != http.StatusCreated {
		t.Fatalf("create a monitor in the group: %d %s", status, body)
	}
	b.post("/groups/"+gid, url.Values{"name": {"renamed"}, "channel": {ids["ops chat"]}}).want(t, http.StatusBadRequest, "is named by monitor &#34;backup&#34;")
	b.post("/groups/"+gid+"/delete", url.Values{"confirm_name": {"on-call"}}).want(t, http.StatusUnprocessableEntity, "type the group&#39;s name, pager, exactly")
	b.post("/groups/"+gid+"/delete", url.Values{"confirm_name": {"pager"}}).
		want(t, http.StatusConflict, "Not deleted: notification group &#34;pager&#34; is named by monitor &#34;backup&#34;")
	if status, body := n.api(a, "PUT", "/api/v1/monitors/"+n.monitorUUID(a, "backup"), `{"manifest_version":1,"kind":"ping","name":"backup","timeout_seconds":60}`); status != http.StatusOK {
		t.Fatalf("detach the monitor: %d %s", status, body)
	}
	p = b.post("/groups/"+gid+"/delete", url.Values{"confirm_name": {"pager"}})
	if p.Status != http.StatusSeeOther || p.Location != "/channels?deleted=pager" {
		t.Fatalf("delete group: %d %s %s", p.Status, p.Location, p.Body)
	}
	if _, err := n.Store.NotificationGroup(a.ID, gid); err == nil {
		t.Fatal("group still there")
	}
	b.get("/groups/"+gid).want(t, http.StatusNotFound)
}

// TestGroupKeepsItsOwnChannels: a group made through the operator API
// with channels of its own lists them to keep or drop.
func TestGroupKeepsItsOwnChannels(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	g, err := n.Admin.CreateGroup(context.Background(), a.ID, "legacy", []byte(`[{"type":"slack","name":"old room","config":{"webhook_url":"https://hooks.slack.com/old"}},{"type":"email","config":{"to":["a@example.com"]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	b := n.browser()
	b.signIn(a)
	b.get("/groups/"+g.ID).want(t, http.StatusOK, `name="keep" value="0" checked> old room (slack, in the group)`, `name="keep" value="1" checked> email (in the group)`)
	b.post("/groups/"+g.ID, url.Values{"name": {"legacy"}, "keep": {"1"}}).want(t, http.StatusOK, "saved")
	stored, _ := n.Store.NotificationGroup(a.ID, g.ID)
	if string(stored.GetChannelsJson()) != `[{"type":"email","config":{"to":["a@example.com"]}}]` {
		t.Fatalf("stored %s", stored.GetChannelsJson())
	}
}

// TestChannelFormsNeedCSRF: every new form is refused without the
// session's token.
func TestChannelFormsNeedCSRF(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	ch, err := n.Admin.CreateChannel(context.Background(), a.ID, adminChannel("slack", "ops", `{"webhook_url":"https://hooks.slack.com/x"}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := n.Admin.CreateGroup(context.Background(), a.ID, "on-call", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := n.browser()
	b.signIn(a)
	for _, path := range []string{"/channels/" + ch.ID, "/channels/" + ch.ID + "/delete", "/groups/" + g.ID, "/groups/" + g.ID + "/delete"} {
		b.post(path, url.Values{"csrf": {"forged"}, "name": {"x"}, "confirm_name": {"ops"}}).want(t, http.StatusForbidden)
	}
	if _, err := n.Store.Channel(a.ID, ch.ID); err != nil {
		t.Fatal(err)
	}
}

func adminChannel(typ, name, config string) admin.ChannelRequest {
	return admin.ChannelRequest{Type: typ, Name: name, Config: []byte(config), Default: true}
}
