package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

type groupOut struct {
	ID, Name  string
	Channels  []map[string]any
	CreatedAt string `json:"created_at"`
}

// mustCreateGroup makes a group and returns its id.
func mustCreateGroup(t *testing.T, srv *controltest.Server, acct, body string) string {
	t.Helper()
	r := do(t, srv, "POST", "/admin/v1/accounts/"+acct+"/notification-groups", body)
	r.wantStatus(t, http.StatusCreated)
	var g groupOut
	r.decode(t, &g)
	return g.ID
}

// nameGroup makes a ping monitor called name of acct that names group.
func nameGroup(t *testing.T, srv *controltest.Server, acct, name, group string) {
	t.Helper()
	srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: "7d1e4b0a-1111-4c2e-9a55-" + strings.Repeat("0", 12-len(name)) + name, Kind: "ping", Name: name, Enabled: true, TimeoutSeconds: 3600, NotificationGroup: group,
	}}}}})
}

func TestGetGroups(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	ch := mustCreateChannel(t, srv, acct, `{"type":"email","name":"ops mail","config":{"to":["ops@example.com"]},"default":false}`)
	id := mustCreateGroup(t, srv, acct, `{"name":"on-call","channels":[{"channel_id":"`+ch+`"},{"type":"slack","name":"#ops","config":{"webhook_url":"`+slackURL+`"}}]}`)
	base := "/admin/v1/accounts/" + acct + "/notification-groups"

	r := do(t, srv, "GET", base+"/"+id, "")
	r.wantStatus(t, http.StatusOK)
	want := `{"id":"` + id + `","name":"on-call","channels":[{"channel_id":"` + ch + `"},{"type":"slack","name":"#ops","config":{"webhook_url":"https://hooks.slack.com/****cret"}}],"created_at":"2026-03-15T12:30:00Z"}`
	if strings.TrimSpace(string(r.body)) != want {
		t.Errorf("group\n%s\nwant\n%s", r.body, want)
	}
	r = do(t, srv, "GET", base, "")
	r.wantStatus(t, http.StatusOK)
	if got := strings.TrimSpace(string(r.body)); got != `{"notification_groups":[`+want+`]}` {
		t.Errorf("list %s", got)
	}
	do(t, srv, "GET", base+"/nope", "").wantError(t, http.StatusNotFound, "not_found", "notification group nope not found")
	do(t, srv, "GET", "/admin/v1/accounts/nope/notification-groups", "").wantError(t, http.StatusNotFound, "not_found", "account nope not found")
	other := mustCreateAccount(t, srv, "dev@example.com").ID
	do(t, srv, "GET", "/admin/v1/accounts/"+other+"/notification-groups/"+id, "").wantError(t, http.StatusNotFound, "not_found", "notification group")
}

func TestGroupChannelIDs(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	other := mustCreateAccount(t, srv, "dev@example.com").ID
	theirs := mustCreateChannel(t, srv, other, `{"type":"email","name":"dev mail","config":{"to":["dev@example.com"]}}`)
	path := "/admin/v1/accounts/" + acct + "/notification-groups"
	for _, tc := range []struct{ body, msg string }{
		{`{"name":"g","channels":[{"channel_id":"` + theirs + `"}]}`, "invalid field: channels[0].channel_id: no alert channel"},
		{`{"name":"g","channels":[{"channel_id":"x","type":"email"}]}`, "invalid field: channels[0]: a channel named by channel_id has no type, name or config"},
		{`{"name":"g","channels":[{"channel_id":5}]}`, "invalid field: channels[0].channel_id: must be a string"},
	} {
		do(t, srv, "POST", path, tc.body).wantError(t, http.StatusBadRequest, "invalid_request", tc.msg)
	}
	// A channel that a group names is not deleted.
	ch := mustCreateChannel(t, srv, acct, `{"type":"email","name":"ops mail","config":{"to":["ops@example.com"]}}`)
	mustCreateGroup(t, srv, acct, `{"name":"on-call","channels":[{"channel_id":"`+ch+`"}]}`)
	do(t, srv, "DELETE", "/admin/v1/accounts/"+acct+"/channels/"+ch, "").
		wantError(t, http.StatusConflict, "channel_in_use", `the channel is in notification group "on-call"`)
}

func TestPutGroup(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	ch := mustCreateChannel(t, srv, acct, `{"type":"email","name":"ops mail","config":{"to":["ops@example.com"]}}`)
	id := mustCreateGroup(t, srv, acct, `{"name":"on-call","channels":[{"type":"slack","config":{"webhook_url":"`+slackURL+`"}}]}`)
	path := "/admin/v1/accounts/" + acct + "/notification-groups/" + id

	// Masked values keep the stored secret, wherever the channel moved.
	r := do(t, srv, "PUT", path, `{"name":"pager","channels":[{"channel_id":"`+ch+`"},{"type":"slack","name":"#ops","config":{"webhook_url":"https://hooks.slack.com/****cret"}}]}`)
	r.wantStatus(t, http.StatusOK)
	var g groupOut
	r.decode(t, &g)
	if g.ID != id || g.Name != "pager" || len(g.Channels) != 2 || g.Channels[0]["channel_id"] != ch {
		t.Errorf("answer %s", r.body)
	}
	stored, err := srv.Store.NotificationGroup(acct, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"channel_id":"` + ch + `"},{"type":"slack","name":"#ops","config":{"webhook_url":"` + slackURL + `"}}]`; string(stored.GetChannelsJson()) != want || stored.GetName() != "pager" {
		t.Errorf("stored %s %s, want %s", stored.GetName(), stored.GetChannelsJson(), want)
	}
	// A webhook without a secret gets one, shown in this answer only; the
	// other secrets stay masked.
	r = do(t, srv, "PUT", path, `{"name":"pager","channels":[{"type":"webhook","config":{"url":"https://example.com/hook"}},{"type":"slack","config":{"webhook_url":"https://hooks.slack.com/****cret"}}]}`)
	r.wantStatus(t, http.StatusOK)
	r.decode(t, &g)
	secret, _ := g.Channels[0]["config"].(map[string]any)["secret"].(string)
	checkSecret(t, secret)
	if strings.Contains(string(r.body), slackURL) {
		t.Errorf("the slack URL is shown with the new webhook secret: %s", r.body)
	}
	if r := do(t, srv, "GET", path, ""); strings.Contains(string(r.body), secret) {
		t.Errorf("the secret is read back: %s", r.body)
	}

	for _, tc := range []struct{ body, msg string }{
		{`{"name":"pager","channels":[{"type":"slack","config":{"webhook_url":"https://hooks.slack.com/****nope"}}]}`, "invalid field: channels[0].config.webhook_url: a masked value"},
		{`{"name":"pager","channels":[{"type":"slack","config":{}}]}`, "invalid field: channels[0].config.webhook_url"},
		{`{"name":"","channels":[]}`, "invalid field: name"},
		{`{"name":"pager","channels":{}}`, "invalid field: channels"},
	} {
		do(t, srv, "PUT", path, tc.body).wantError(t, http.StatusBadRequest, "invalid_request", tc.msg)
	}
	do(t, srv, "PUT", "/admin/v1/accounts/"+acct+"/notification-groups/nope", `{"name":"x"}`).wantError(t, http.StatusNotFound, "not_found", "notification group nope not found")
	mustCreateGroup(t, srv, acct, `{"name":"other"}`)
	do(t, srv, "PUT", path, `{"name":"other"}`).wantError(t, http.StatusConflict, "conflict", `a notification group named "other" exists`)
	// A group that monitors name keeps its name.
	nameGroup(t, srv, acct, "backup", "pager")
	do(t, srv, "PUT", path, `{"name":"renamed"}`).wantError(t, http.StatusConflict, "notification_group_in_use", `notification group "pager" is named by monitor "backup"`)
	do(t, srv, "PUT", path, `{"name":"pager"}`).wantStatus(t, http.StatusOK)
}

func TestDeleteGroup(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	id := mustCreateGroup(t, srv, acct, `{"name":"on-call","channels":[]}`)
	path := "/admin/v1/accounts/" + acct + "/notification-groups/" + id
	nameGroup(t, srv, acct, "backup", "on-call")
	do(t, srv, "DELETE", path, "").wantError(t, http.StatusConflict, "notification_group_in_use", `notification group "on-call" is named by monitor "backup"`)
	if _, err := srv.Store.NotificationGroup(acct, id); err != nil {
		t.Fatalf("a refused delete removed the group: %v", err)
	}
	// Once no monitor names it, it goes.
	srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: acct, Updates: []*raftv1.MonitorSpec{{
		Uuid: "7d1e4b0a-1111-4c2e-9a55-000000backup", Kind: "ping", Name: "backup", Enabled: true, TimeoutSeconds: 3600,
	}}}}})
	r := do(t, srv, "DELETE", path, "")
	r.wantStatus(t, http.StatusNoContent)
	do(t, srv, "GET", path, "").wantError(t, http.StatusNotFound, "not_found", "notification group "+id+" not found")
	do(t, srv, "DELETE", path, "").wantError(t, http.StatusNotFound, "not_found", "notification group "+id+" not found")
}
