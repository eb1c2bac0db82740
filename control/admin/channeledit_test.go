package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

const slackURL = "https://hooks.slack.com/services/T000/B000/XXXXXXXXsecret"

type channelOut struct {
	ID, Type, Name string
	Default        bool
	Config         map[string]any
	CreatedAt      string `json:"created_at"`
}

// mustCreateChannel makes a channel and returns its id.
func mustCreateChannel(t *testing.T, srv *controltest.Server, acct, body string) string {
	t.Helper()
	r := do(t, srv, "POST", "/admin/v1/accounts/"+acct+"/channels", body)
	r.wantStatus(t, http.StatusCreated)
	var c channelOut
	r.decode(t, &c)
	return c.ID
}

// storedConfig is the config of a channel as stored.
func storedConfig(t *testing.T, srv *controltest.Server, acct, id string) map[string]any {
	t.Helper()
	c, err := srv.Store.Channel(acct, id)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(c.GetConfigJson(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGetChannels(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	other := mustCreateAccount(t, srv, "dev@example.com").ID
	id := mustCreateChannel(t, srv, acct, `{"type":"slack","name":"ops chat","config":{"webhook_url":"`+slackURL+`"}}`)
	pd := mustCreateChannel(t, srv, acct, `{"type":"pagerduty","name":"on call","config":{"routing_key":"R0UT1NGKEY0123456789abcd"},"default":false}`)
	base := "/admin/v1/accounts/" + acct + "/channels"

	r := do(t, srv, "GET", base+"/"+id, "")
	r.wantStatus(t, http.StatusOK)
	var c channelOut
	r.decode(t, &c)
	if c.ID != id || c.Type != "slack" || c.Name != "ops chat" || !c.Default || c.CreatedAt != "2026-03-15T12:30:00Z" {
		t.Errorf("channel %+v", c)
	}
	if got := c.Config["webhook_url"]; got != "https://hooks.slack.com/****cret" {
		t.Errorf("webhook_url shown as %q", got)
	}
	if strings.Contains(string(r.body), "XXXXXXXX") {
		t.Errorf("the secret is in the answer: %s", r.body)
	}

	r = do(t, srv, "GET", base, "")
	r.wantStatus(t, http.StatusOK)
	var list struct{ Channels []channelOut }
	r.decode(t, &list)
	if len(list.Channels) != 2 || strings.Contains(string(r.body), "R0UT1NGKEY") || !strings.Contains(string(r.body), `"routing_key":"****abcd"`) {
		t.Errorf("list %s", r.body)
	}
	for _, ch := range list.Channels {
		if ch.ID == pd && ch.Default {
			t.Errorf("pagerduty channel is default: %+v", ch)
		}
	}

	do(t, srv, "GET", base+"/nope", "").wantError(t, http.StatusNotFound, "not_found", "channel nope not found")
	do(t, srv, "GET", "/admin/v1/accounts/"+other+"/channels/"+id, "").wantError(t, http.StatusNotFound, "not_found", "channel "+id+" not found")
	do(t, srv, "GET", "/admin/v1/accounts/nope/channels", "").wantError(t, http.StatusNotFound, "not_found", "account nope not found")
	do(t, srv, "GET", "/admin/v1/accounts/nope/channels/"+id, "").wantError(t, http.StatusNotFound, "not_found", "account nope not found")
	r = do(t, srv, "GET", "/admin/v1/accounts/"+other+"/channels", "")
	r.wantStatus(t, http.StatusOK)
	if strings.TrimSpace(string(r.body)) != `{"channels":[]}` {
		t.Errorf("no channels: %s", r.body)
	}
}

func TestPutChannel(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	id := mustCreateChannel(t, srv, acct, `{"type":"slack","name":"ops chat","config":{"webhook_url":"`+slackURL+`"},"default":false}`)
	path := "/admin/v1/accounts/" + acct + "/channels/" + id

	// The masked value read back keeps the secret; the rest changes.
	r := do(t, srv, "PUT", path, `{"type":"slack","name":"ops room","config":{"webhook_url":"https://hooks.slack.com/****cret","api_url":"https://proxy.example.com"}}`)
	r.wantStatus(t, http.StatusOK)
	var c channelOut
	r.decode(t, &c)
	if c.Name != "ops room" || c.Default || c.Config["webhook_url"] != "https://hooks.slack.com/****cret" || c.Config["api_url"] != "https://proxy.example.com" {
		t.Errorf("answer %+v (default left out keeps false)", c)
	}
	if got := storedConfig(t, srv, acct, id); got["webhook_url"] != slackURL || got["api_url"] != "https://proxy.example.com" {
		t.Errorf("stored %v", got)
	}
	// A new secret in full replaces it.
	do(t, srv, "PUT", path, `{"type":"slack","name":"ops room","config":{"webhook_url":"https://hooks.slack.com/services/NEW"},"default":true}`).wantStatus(t, http.StatusOK)
	if got := storedConfig(t, srv, acct, id); got["webhook_url"] != "https://hooks.slack.com/services/NEW" {
		t.Errorf("stored %v", got)
	}
	if c, _ := srv.Store.Channel(acct, id); !c.GetIsDefault() {
		t.Error("default not set")
	}

	for _, tc := range []struct{ body, code, msg string }{
		// A mask that is not the stored secret's is never stored.
		{`{"type":"slack","name":"x","config":{"webhook_url":"https://hooks.slack.com/****abcd"}}`, "invalid_request", "invalid field: config.webhook_url: a masked value"},
		{`{"type":"slack","name":"x","config":{"webhook_url":"hooks.slack.com"}}`, "invalid_request", "invalid field: config.webhook_url: must be an absolute http or https URL"},
		{`{"type":"slack","name":"x","config":{"webhook_url":"https://a.example.com","extra":1}}`, "invalid_request", "invalid field: config.extra: unknown field"},
		{`{"type":"sms","name":"x","config":{}}`, "invalid_request", "invalid field: type: must be one of"},
		{`{"type":"slack","name":"","config":{}}`, "invalid_request", "invalid field: name: required"},
		{`{"type":"slack","name":"x","config":[]}`, "invalid_request", "invalid field: config: must be an object"},
		{`{"type":"slack","name":"x","colour":"red"}`, "invalid_request", "invalid field: colour: unknown field"},
		{`[]`, "invalid_json", "invalid JSON"},
		// A masked value of another type is no secret to keep.
		{`{"type":"pagerduty","name":"x","config":{"routing_key":"****cret"}}`, "invalid_request", "invalid field: config.routing_key: a masked value"},
	} {
		do(t, srv, "PUT", path, tc.body).wantError(t, http.StatusBadRequest, tc.code, tc.msg)
	}
	if got := storedConfig(t, srv, acct, id); got["webhook_url"] != "https://hooks.slack.com/services/NEW" {
		t.Errorf("a refused PUT changed the channel: %v", got)
	}
	do(t, srv, "PUT", "/admin/v1/accounts/"+acct+"/channels/nope", `{"type":"slack","name":"x","config":{"webhook_url":"https://a.example.com"}}`).
		wantError(t, http.StatusNotFound, "not_found", "channel nope not found")
	do(t, srv, "PUT", "/admin/v1/accounts/nope/channels/"+id, `{"type":"slack","name":"x","config":{"webhook_url":"https://a.example.com"}}`).
		wantError(t, http.StatusNotFound, "not_found", "account nope not found")

	// Another type: a webhook without a secret gets one, shown in this
	// answer only.
	r = do(t, srv, "PUT", path, `{"type":"webhook","name":"ci","config":{"url":"https://example.com/hook"}}`)
	r.wantStatus(t, http.StatusOK)
	r.decode(t, &c)
	secret, _ := c.Config["secret"].(string)
	checkSecret(t, secret)
	if got := storedConfig(t, srv, acct, id); got["secret"] != secret {
		t.Errorf("stored %v, answered secret %q", got, secret)
	}
	r = do(t, srv, "GET", path, "")
	r.decode(t, &c)
	if c.Type != "webhook" || c.Config["secret"] != "****"+secret[len(secret)-4:] || strings.Contains(string(r.body), secret) {
		t.Errorf("read back %s", r.body)
	}
}

func TestDeleteChannel(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	id := mustCreateChannel(t, srv, acct, `{"type":"slack","name":"ops chat","config":{"webhook_url":"`+slackURL+`"}}`)
	path := "/admin/v1/accounts/" + acct + "/channels/" + id
	// An alert waiting for the channel is given up when it is deleted.
	srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{{
		AccountId: acct, Monitor: "backup", EventType: "ping", Status: "fail", ReceivedUnixMs: srv.Now.UnixMilli(),
	}}}}})
	if p, _ := srv.Store.PendingAlerts(0); len(p) != 1 {
		t.Fatalf("pending %v", p)
	}

	r := do(t, srv, "DELETE", path, "")
	r.wantStatus(t, http.StatusNoContent)
	if len(r.body) != 0 {
		t.Errorf("body %q", r.body)
	}
	if p, _ := srv.Store.PendingAlerts(0); len(p) != 0 {
		t.Fatalf("pending after delete %v", p)
	}
	do(t, srv, "GET", path, "").wantError(t, http.StatusNotFound, "not_found", "channel "+id+" not found")
	do(t, srv, "DELETE", path, "").wantError(t, http.StatusNotFound, "not_found", "channel "+id+" not found")
	do(t, srv, "DELETE", "/admin/v1/accounts/nope/channels/"+id, "").wantStatus(t, http.StatusNotFound)
}

func TestChannelDeliveries(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com").ID
	id := mustCreateChannel(t, srv, acct, `{"type":"slack","name":"ops chat","config":{"webhook_url":"`+slackURL+`"}}`)
	path := "/admin/v1/accounts/" + acct + "/channels/" + id + "/deliveries"
	r := do(t, srv, "GET", path, "")
	r.wantStatus(t, http.StatusOK)
	if strings.TrimSpace(string(r.body)) != `{"deliveries":[]}` {
		t.Errorf("no deliveries yet: %s", r.body)
	}
	srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{{
		AccountId: acct, Monitor: "backup", EventType: "ping", Status: "fail", ReceivedUnixMs: srv.Now.UnixMilli(),
	}}}}})
	pending, _ := srv.Store.PendingAlerts(0)
	srv.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_RecordDelivery{RecordDelivery: &raftv1.RecordDelivery{
		AlertId: pending[0].GetId(), ChannelRef: "chan:" + id, Error: "slack: 503 Service Unavailable", NextTryUnixMs: srv.Now.UnixMilli() + 10_000,
	}}})
	r = do(t, srv, "GET", path, "")
	r.wantStatus(t, http.StatusOK)
	var got struct {
		Deliveries []struct {
			AlertID    string `json:"alert_id"`
			AlertType  string `json:"alert_type"`
			OccurredAt string `json:"occurred_at"`
			Monitor    struct{ UUID, Name string }
			Status     string
			Error      string
			Attempts   int
		}
	}
	r.decode(t, &got)
	if len(got.Deliveries) != 1 {
		t.Fatalf("deliveries %s", r.body)
	}
	if d := got.Deliveries[0]; d.AlertID != pending[0].GetId() || d.AlertType != "monitor.failed" || d.OccurredAt != "2026-03-15T12:30:00Z" ||
		d.Monitor.Name != "backup" || d.Monitor.UUID != pending[0].GetMonitorUuid() || d.Status != "retrying" || d.Error != "slack: 503 Service Unavailable" || d.Attempts != 1 {
		t.Errorf("delivery %+v", d)
	}
	do(t, srv, "GET", "/admin/v1/accounts/"+acct+"/channels/nope/deliveries", "").wantError(t, http.StatusNotFound, "not_found", "channel nope not found")
	do(t, srv, "GET", "/admin/v1/accounts/nope/channels/"+id+"/deliveries", "").wantError(t, http.StatusNotFound, "not_found", "account nope not found")
}
