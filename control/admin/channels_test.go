package admin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/admin"
	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channelregistry"
	"lookout/control/controltest"
	"lookout/control/state"
)

// newChannelServer is controltest.NewServer with a channel registry whose
// operator has an SMTP server configured.
func newChannelServer(t *testing.T) *controltest.Server {
	t.Helper()
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	now := time.Date(2026, time.March, 15, 12, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := controltest.NewCluster(store, clock)
	reg := channelregistry.New(channel.Deps{SMTP: channel.SMTPSettings{Addr: "127.0.0.1:1", From: "alerts@example.com"}})
	api := admin.New(admin.Options{Cluster: c, State: store, Token: controltest.Token, Now: clock, Channels: reg})
	mux := http.NewServeMux()
	api.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &controltest.Server{URL: srv.URL, Store: store, Cluster: c, API: api, Now: now}
}

type createdChannel struct {
	ID, Type, Name string
	Default        bool
	Config         map[string]any
}

func TestCreateChannel(t *testing.T) {
	srv := newChannelServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/channels"

	r := do(t, srv, "POST", path, `{"type":"email","name":"ops mail","config":{"to":["ops@example.com"]}}`)
	r.wantStatus(t, http.StatusCreated)
	var mail createdChannel
	r.decode(t, &mail)
	if mail.ID == "" || mail.Type != "email" || mail.Name != "ops mail" || !mail.Default {
		t.Errorf("created %+v", mail)
	}

	r = do(t, srv, "POST", path, `{"type":"webhook","name":"ci","config":{"url":"https://example.com/hook"},"default":false}`)
	r.wantStatus(t, http.StatusCreated)
	var hook createdChannel
	r.decode(t, &hook)
	secret, _ := hook.Config["secret"].(string)
	checkSecret(t, secret)
	if hook.Default || hook.Config["url"] != "https://example.com/hook" {
		t.Errorf("created %+v", hook)
	}

	stored, err := srv.Store.Channels(acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, c := range stored {
		byID[c.GetId()] = c.GetType() + " " + c.GetName() + " " + string(c.GetConfigJson())
		if (c.GetId() == mail.ID) != c.GetIsDefault() {
			t.Errorf("channel %s default %v", c.GetName(), c.GetIsDefault())
		}
	}
	want := map[string]string{
		mail.ID: `email ops mail {"to":["ops@example.com"]}`,
		hook.ID: `webhook ci {"secret":"` + secret + `","url":"https://example.com/hook"}`,
	}
	if len(byID) != 2 || byID[mail.ID] != want[mail.ID] || byID[hook.ID] != want[hook.ID] {
		t.Errorf("stored %q, want %q", byID, want)
	}
}

func TestCreateChannelInvalid(t *testing.T) {
	srv := controltest.NewServer(t) // no SMTP server
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/channels"
	for _, tt := range []struct{ name, body, msg string }{
		{"no type", `{"name":"x","config":{}}`, "invalid field: type: required"},
		{"bad type", `{"type":"sms","name":"x"}`, "invalid field: type: must be one of"},
		{"no name", `{"type":"slack","config":{"webhook_url":"https://x.example"}}`, "invalid field: name: required"},
		{"bad url", `{"type":"slack","name":"x","config":{"webhook_url":"x.example"}}`, "invalid field: config.webhook_url: must be"},
		{"config not object", `{"type":"slack","name":"x","config":[]}`, "invalid field: config: must be an object"},
		{"opsgenie region", `{"type":"opsgenie","name":"x","config":{"api_key":"k","region":"mars"}}`, "invalid field: config.region"},
		{"default not bool", `{"type":"slack","name":"x","config":{"webhook_url":"https://x.example"},"default":"yes"}`, "invalid field: default"},
		{"unknown field", `{"type":"slack","name":"x","config":{"webhook_url":"https://x.example"},"group":"g"}`, "invalid field: group"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			do(t, srv, "POST", path, tt.body).wantError(t, http.StatusBadRequest, "invalid_request", tt.msg)
		})
	}
	do(t, srv, "POST", "/admin/v1/accounts/nope/channels", `{"type":"slack","name":"x","config":{"webhook_url":"https://x.example"}}`).
		wantError(t, http.StatusNotFound, "not_found", "account nope not found")
}

func TestTestChannel(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	rx := channeltest.NewReceiver(t)
	r := do(t, srv, "POST", "/admin/v1/accounts/"+acct.ID+"/channels",
		`{"type":"slack","name":"#ops","config":{"webhook_url":"https://hooks.slack.com/services/T/B/X","api_url":"`+rx.URL+`"}}`)
	r.wantStatus(t, http.StatusCreated)
	var ch createdChannel
	r.decode(t, &ch)
	path := "/admin/v1/accounts/" + acct.ID + "/channels/" + ch.ID + "/test"

	r = do(t, srv, "POST", path, "")
	r.wantStatus(t, http.StatusOK)
	if strings.TrimSpace(string(r.body)) != `{"delivered":true}` {
		t.Errorf("answer %s", r.body)
	}
	req := rx.Last(t)
	body := string(req.Body)
	if req.URI != "/services/T/B/X" || !strings.Contains(body, "Test message from Lookout: this channel works") ||
		!strings.Contains(body, `"url":"`+srv.URL+`/"`) || !strings.Contains(body, ":large_blue_circle:") {
		t.Errorf("sent %s %s", req.URI, body)
	}

	rx.Respond(http.StatusInternalServerError, `{"error":"boom"}`)
	r = do(t, srv, "POST", path, "")
	r.wantError(t, http.StatusBadGateway, "delivery_failed", "slack: receiver answered 500")
	if strings.Contains(string(r.body), rx.URL) || strings.Contains(string(r.body), "hooks.slack.com") {
		t.Errorf("the error shows the address: %s", r.body)
	}
	if strings.Contains(string(r.body), "boom") {
		t.Errorf("the error shows the receiver's answer: %s", r.body)
	}
	rx.Respond(http.StatusNotFound, `no_team`)
	do(t, srv, "POST", path, "").wantError(t, http.StatusBadGateway, "delivery_failed", "slack: permanent: receiver answered 404")

	do(t, srv, "POST", "/admin/v1/accounts/"+acct.ID+"/channels/nope/test", "").
		wantError(t, http.StatusNotFound, "not_found", "channel nope not found")
	do(t, srv, "POST", "/admin/v1/accounts/nope/channels/"+ch.ID+"/test", "").
		wantError(t, http.StatusNotFound, "not_found", "account nope not found")
	other := mustCreateAccount(t, srv, "other@example.com")
	do(t, srv, "POST", "/admin/v1/accounts/"+other.ID+"/channels/"+ch.ID+"/test", "").
		wantError(t, http.StatusNotFound, "not_found", "channel "+ch.ID+" not found")
	if n := len(rx.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// TestTestChannelRefusesPrivateTargets: with the production registry
// (no --allow-private-targets), a channel whose receiver is on loopback
// (its url, its api_url, or a name that resolves to loopback) is saved,
// but its test send answers the refusal, and the receiver sees nothing.
func TestTestChannelRefusesPrivateTargets(t *testing.T) {
	srv := controltest.NewServer(t)
	api := admin.New(admin.Options{Cluster: srv.Cluster, State: srv.Store, Token: controltest.Token, Channels: channelregistry.New(channel.Deps{})})
	mux := http.NewServeMux()
	api.Register(mux)
	hs := httptest.NewServer(mux)
	defer hs.Close()
	guarded := &controltest.Server{URL: hs.URL, Store: srv.Store, Cluster: srv.Cluster, API: api, Now: srv.Now}
	acct := mustCreateAccount(t, guarded, "ops@example.com")
	rx := channeltest.NewReceiver(t)
	rx.Respond(http.StatusInternalServerError, "internal secrets")
	port := rx.URL[strings.LastIndex(rx.URL, ":"):]
	for _, config := range []string{
		`{"type":"webhook","name":"a","config":{"url":"` + rx.URL + `/hook"}}`,
		`{"type":"webhook","name":"b","config":{"url":"http://localhost` + port + `/hook"}}`,
		`{"type":"slack","name":"c","config":{"webhook_url":"https://hooks.slack.com/services/T/B/X","api_url":"http://[::ffff:127.0.0.1]` + port + `"}}`,
	} {
		r := do(t, guarded, "POST", "/admin/v1/accounts/"+acct.ID+"/channels", config)
		r.wantStatus(t, http.StatusCreated)
		var ch createdChannel
		r.decode(t, &ch)
		r = do(t, guarded, "POST", "/admin/v1/accounts/"+acct.ID+"/channels/"+ch.ID+"/test", "")
		r.wantError(t, http.StatusBadGateway, "delivery_failed", "target not allowed: ")
		if !strings.Contains(string(r.body), "is a loopback address") || strings.Contains(string(r.body), "secrets") {
			t.Errorf("%s: answer %s", ch.Name, r.body)
		}
	}
	if n := len(rx.Requests()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}

// TestEmailNeedsSMTP: on a node without --smtp-addr, e-mail channels are
// refused when saved, in groups and as default channels.
func TestEmailNeedsSMTP(t *testing.T) {
	srv := controltest.NewServer(t)
	acct, err := srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	api := admin.New(admin.Options{Cluster: srv.Cluster, State: srv.Store, Token: controltest.Token, Channels: channelregistry.New(channel.Deps{})})
	mux := http.NewServeMux()
	api.Register(mux)
	hs := httptest.NewServer(mux)
	defer hs.Close()
	for path, body := range map[string]string{
		"/channels":            `{"type":"email","name":"x","config":{"to":["a@example.com"]}}`,
		"/notification-groups": `{"name":"g","channels":[{"type":"email","config":{"to":["a@example.com"]}}]}`,
	} {
		req, _ := http.NewRequest("POST", hs.URL+"/admin/v1/accounts/"+acct.ID+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+controltest.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "the operator has not configured SMTP") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
}
