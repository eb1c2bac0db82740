package channelregistry_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channelregistry"
)

func TestTypes(t *testing.T) {
	got := channelregistry.New(channel.Deps{}).Types()
	want := []string{"discord", "email", "opsgenie", "pagerduty", "shoutrrr", "slack", "teams", "telegram", "webhook"}
	if !slices.Equal(got, want) {
		t.Errorf("types %q, want %q", got, want)
	}
}

var smtp = channel.SMTPSettings{Addr: "smtp.example.com:587", From: "alerts@example.com"}

// TestValidate checks each type's config rules through the registry.
func TestValidate(t *testing.T) {
	r := channelregistry.New(channel.Deps{SMTP: smtp})
	for _, tc := range []struct {
		typ, config string
		field       string // "": valid; else the field named, or "-" for a ConfigError of no field
	}{
		{"email", `{"to": ["ops@example.com"]}`, ""},
		{"email", `{"to": []}`, "to"},
		{"email", `{"to": ["nope"]}`, "to[0]"},
		{"slack", `{"webhook_url": "https://hooks.slack.com/services/T/B/X"}`, ""},
		{"slack", `{"webhook_url": "hooks.slack.com/services/T/B/X"}`, "webhook_url"},
		{"slack", `{}`, "webhook_url"},
		{"discord", `{"webhook_url": "https://discord.com/api/webhooks/1/x"}`, ""},
		{"discord", `{"webhook_url": "https://discord.com/api/webhooks/1/x", "username": "x"}`, "username"},
		{"teams", `{"webhook_url": "https://x.logic.azure.com/workflows/1?sig=a", "api_url": "http://127.0.0.1:9"}`, ""},
		{"teams", `{"webhook_url": "https://x.logic.azure.com/workflows/1", "api_url": "http://127.0.0.1:9/?a=b"}`, "api_url"},
		{"pagerduty", `{"routing_key": "R0UT1NG"}`, ""},
		{"pagerduty", `{"routing_key": 5}`, "routing_key"},
		{"opsgenie", `{"api_key": "k", "region": "eu"}`, ""},
		{"opsgenie", `{"api_key": "k", "region": "asia"}`, "region"},
		{"telegram", `{"bot_token": "1:a", "chat_id": -100}`, ""},
		{"telegram", `{"bot_token": "1:a"}`, "chat_id"},
		{"webhook", `{"url": "https://example.com/hook", "secret": "whsec_c2VjcmV0"}`, ""},
		{"webhook", `{"url": "https://example.com/hook"}`, "secret"},
		{"webhook", `[]`, "-"},
		{"shoutrrr", `{"url": "ntfy://ntfy.sh/alerts"}`, ""},
		{"shoutrrr", `{"url": "matrix://user:pass@matrix.example.com"}`, "url"},
		{"sms", `{}`, "type"},
	} {
		err := r.Validate(tc.typ, json.RawMessage(tc.config))
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s %s: %v", tc.typ, tc.config, err)
			}
			continue
		}
		var ce *channel.ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, channel.ErrInvalidConfig) {
			t.Errorf("%s %s: %v, want a ConfigError", tc.typ, tc.config, err)
			continue
		}
		if want := strings.TrimPrefix(tc.field, "-"); ce.Field != want {
			t.Errorf("%s %s: field %q, want %q (%v)", tc.typ, tc.config, ce.Field, want, err)
		}
	}
}

// TestValidateEmailNeedsSMTP: the registry's Deps decide whether e-mail
// can be sent.
func TestValidateEmailNeedsSMTP(t *testing.T) {
	cfg := json.RawMessage(`{"to": ["ops@example.com"]}`)
	err := channelregistry.New(channel.Deps{}).Validate("email", cfg)
	if err == nil || !strings.Contains(err.Error(), "--smtp-addr") {
		t.Errorf("without SMTP: %v", err)
	}
	if err := channelregistry.New(channel.Deps{SMTP: smtp}).Validate("email", cfg); err != nil {
		t.Errorf("with SMTP: %v", err)
	}
}
