package admin_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"lookout/control/controltest"
)

func TestCreateGroup(t *testing.T) {
	srv := newChannelServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/notification-groups"
	tests := []struct{ name, body, channels string }{
		{"channels", `{"name":"on-call","channels":[
			{"type":"slack","name":"#ops","config":{"webhook_url":"https://hooks.example.com/x"}},
			{"type":"email","config":{"to":["ops@example.com"]}},
			{"type":"webhook","config":{"url":"https://example.com/hook","secret":"whsec_c2VjcmV0"}}]}`,
			`[{"type":"slack","name":"#ops","config":{"webhook_url":"https://hooks.example.com/x"}},{"type":"email","config":{"to":["ops@example.com"]}},{"type":"webhook","config":{"url":"https://example.com/hook","secret":"whsec_c2VjcmV0"}}]`},
		{"empty", `{"name":"quiet","channels":[]}`, `[]`},
		{"absent", `{"name":"later"}`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, srv, "POST", path, tt.body)
			r.wantStatus(t, http.StatusCreated)
			var got struct{ ID, Name string }
			r.decode(t, &got)
			if !strings.Contains(string(r.body), `"channels":`+tt.channels) {
				t.Errorf("body %s, want channels %s", r.body, tt.channels)
			}
			g, err := srv.Store.NotificationGroupByName(acct.ID, got.Name)
			if err != nil {
				t.Fatal(err)
			}
			if g.GetId() != got.ID || string(g.GetChannelsJson()) != tt.channels {
				t.Errorf("stored %v", g)
			}
		})
	}
	do(t, srv, "POST", path, `{"name":"on-call","channels":[]}`).
		wantError(t, http.StatusConflict, "conflict", "a notification group named")
	// The same name on another account is fine.
	other := mustCreateAccount(t, srv, "other@example.com")
	do(t, srv, "POST", "/admin/v1/accounts/"+other.ID+"/notification-groups", `{"name":"on-call","channels":[]}`).
		wantStatus(t, http.StatusCreated)
}

func TestCreateGroupInvalid(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + acct.ID + "/notification-groups"
	tests := []struct{ name, body, msg string }{
		{"no name", `{"channels":[]}`, "invalid field: name"},
		{"long name", `{"name":"` + strings.Repeat("g", 101) + `","channels":[]}`, "invalid field: name"},
		{"channels object", `{"name":"g","channels":{}}`, "invalid field: channels"},
		{"channels string", `{"name":"g","channels":"slack"}`, "invalid field: channels"},
		{"channel not object", `{"name":"g","channels":["slack"]}`, "invalid field: channels[0]"},
		{"no type", `{"name":"g","channels":[{"name":"x"}]}`, "invalid field: channels[0].type"},
		{"bad type", `{"name":"g","channels":[{"type":"slack","config":{"webhook_url":"https://x.example"}},{"type":"sms"}]}`, "invalid field: channels[1].type: must be one of discord, email,"},
		{"bad slack url", `{"name":"g","channels":[{"type":"slack","config":{"webhook_url":"hooks.slack.com/x"}}]}`,
			"invalid field: channels[0].config.webhook_url: must be an absolute http or https URL"},
		{"no slack url", `{"name":"g","channels":[{"type":"slack"}]}`, "invalid field: channels[0].config.webhook_url: is required"},
		{"unknown config field", `{"name":"g","channels":[{"type":"pagerduty","config":{"routing_key":"k","Routing_Key":"k"}}]}`,
			"invalid field: channels[0].config.Routing_Key: unknown field"},
		{"webhook bad url", `{"name":"g","channels":[{"type":"webhook","config":{"url":"ftp://x"}}]}`, "invalid field: channels[0].config.url"},
		{"name not string", `{"name":"g","channels":[{"type":"email","name":3}]}`, "invalid field: channels[0].name"},
		{"config not object", `{"name":"g","channels":[{"type":"email","config":"a@b.c"}]}`, "invalid field: channels[0].config"},
		{"unknown channel field", `{"name":"g","channels":[{"type":"email","to":"a@b.c"}]}`, "invalid field: channels[0].to"},
		{"unknown field", `{"name":"g","channels":[],"members":[]}`, "invalid field: members"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do(t, srv, "POST", path, tt.body).wantError(t, http.StatusBadRequest, "invalid_request", tt.msg)
		})
	}
}

func TestCreateGroupUnknownAccount(t *testing.T) {
	srv := controltest.NewServer(t)
	do(t, srv, "POST", "/admin/v1/accounts/nope/notification-groups", `{"name":"g","channels":[]}`).
		wantError(t, http.StatusNotFound, "not_found", "account nope not found")
}

func TestCreateGroupWebhookSecret(t *testing.T) {
	srv := controltest.NewServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	r := do(t, srv, "POST", "/admin/v1/accounts/"+acct.ID+"/notification-groups",
		`{"name":"hooks","channels":[{"type":"webhook","name":"ci","config":{"url":"https://example.com/hook"}},{"type":"webhook","config":{"url":"https://example.com/2","secret":null}}]}`)
	r.wantStatus(t, http.StatusCreated)
	var got struct {
		Name     string
		Channels []struct {
			Type, Name string
			Config     struct{ URL, Secret string }
		}
	}
	r.decode(t, &got)
	if len(got.Channels) != 2 {
		t.Fatalf("channels %s", r.body)
	}
	for i, ch := range got.Channels {
		checkSecret(t, ch.Config.Secret)
		if ch.Type != "webhook" || ch.Config.URL == "" {
			t.Errorf("channel %d: %+v", i, ch)
		}
	}
	if got.Channels[0].Name != "ci" || got.Channels[0].Config.Secret == got.Channels[1].Config.Secret {
		t.Errorf("channels %+v", got.Channels)
	}
	g, err := srv.Store.NotificationGroupByName(acct.ID, "hooks")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.body), string(g.GetChannelsJson())) {
		t.Errorf("stored %s, answered %s", g.GetChannelsJson(), r.body)
	}
}

// checkSecret checks a secret the service made for a webhook.
func checkSecret(t *testing.T, secret string) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) != 32 {
		t.Errorf("secret %q, want whsec_ and the base64 of 32 bytes", secret)
	}
}
