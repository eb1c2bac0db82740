package email_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/email"
)

func TestNew(t *testing.T) {
	server := channel.SMTPSettings{Addr: "smtp.example.com:587", From: "alerts@example.com"}
	for _, tc := range []struct {
		config string
		smtp   channel.SMTPSettings
		field  string
	}{
		{`{"to": ["a@example.com"]}`, server, ""},
		{`{"to": ["A <a@example.com>", "b@example.com"]}`, server, ""},
		{`{"to": ["a@example.com"], "api_url": "https://ignored.example.com"}`, server, ""},
		{`{"to": ["a@example.com"]}`, channel.SMTPSettings{Addr: "smtp:25", User: "lookout@example.com"}, ""},
		{`{}`, server, "to"},
		{`{"to": []}`, server, "to"},
		{`{"to": "a@example.com"}`, server, "invalid field: to: must be a JSON array"},
		{`null`, server, "invalid field: to:"},
		{`{"to": ["a@example.com", "not an address"]}`, server, "to[1]"},
		{`{"to": ["a@example.com\r\nBcc: x@evil.com"]}`, server, "to[0]"},
		{`{"to": [` + strings.Repeat(`"a@example.com",`, 50) + `"a@example.com"]}`, server, "to"},
		{`{"to": ["a@example.com"], "cc": ["b@example.com"]}`, server, "invalid field: cc: unknown field"},
		{`{"To": ["a@example.com"]}`, server, "invalid field: To: unknown field"},
		{`{"to": ["a@example.com"]}`, channel.SMTPSettings{}, "--smtp-addr"},
		{`{"to": ["a@example.com"]}`, channel.SMTPSettings{Addr: "smtp.example.com"}, "--smtp-addr"},
		{`{"to": ["a@example.com"]}`, channel.SMTPSettings{Addr: "smtp:25", User: "lookout"}, "--smtp-from"},
		{`{"to": ["a@example.com"]}`, channel.SMTPSettings{Addr: "smtp:25", From: "nobody"}, "--smtp-from"},
		{`{"to": ["a@example.com"]}`, channel.SMTPSettings{Addr: "smtp:25", From: "a@example.com", StartTLS: "sometimes"}, "--smtp-starttls"},
	} {
		_, err := email.New(json.RawMessage(tc.config), channel.Deps{SMTP: tc.smtp})
		if tc.field == "" {
			if err != nil {
				t.Errorf("New(%s): %v", tc.config, err)
			}
			continue
		}
		if !errors.Is(err, channel.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("New(%s, %+v) = %v, want ErrInvalidConfig naming %s", tc.config, tc.smtp, err, tc.field)
		}
	}
}

// TestRegistryValidate checks that Registry.Validate uses the
// registry's Deps: without the operator's SMTP settings every e-mail
// config is refused, with them a good one passes.
func TestRegistryValidate(t *testing.T) {
	factories := map[string]channel.Factory{email.Type: email.New}
	r := channel.NewRegistry(factories, channel.Deps{})
	err := r.Validate(email.Type, json.RawMessage(`{"to": ["a@example.com"]}`))
	if !errors.Is(err, channel.ErrInvalidConfig) || !strings.Contains(err.Error(), "--smtp-addr") {
		t.Errorf("Validate = %v", err)
	}
	err = r.Validate(email.Type, json.RawMessage(`{"to": ["bad"]}`))
	if err == nil || !strings.Contains(err.Error(), "to[0]") {
		t.Errorf("Validate = %v, want the config's own error first", err)
	}
	r = channel.NewRegistry(factories, channel.Deps{SMTP: channel.SMTPSettings{Addr: "smtp.example.com:587", From: "alerts@example.com"}})
	if err := r.Validate(email.Type, json.RawMessage(`{"to": ["a@example.com"]}`)); err != nil {
		t.Errorf("Validate with SMTP = %v", err)
	}
}
