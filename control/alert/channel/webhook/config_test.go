package webhook_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/webhook"
)

func TestConfig(t *testing.T) {
	for _, c := range []struct {
		name, config, field string // field "": valid
	}{
		{"valid", `{"url": "https://example.com/hook", "secret": "` + secret + `"}`, ""},
		{"no prefix", `{"url": "http://example.com/hook", "secret": "c2VjcmV0"}`, ""},
		{"api_url", `{"url": "https://example.com/hook", "secret": "c2VjcmV0", "api_url": "http://127.0.0.1:8080"}`, ""},
		{"empty", ``, "url"},
		{"null", `null`, "url"},
		{"missing url", `{"secret": "c2VjcmV0"}`, "url"},
		{"relative url", `{"url": "/hook", "secret": "c2VjcmV0"}`, "url"},
		{"ftp url", `{"url": "ftp://example.com/hook", "secret": "c2VjcmV0"}`, "url"},
		{"file url", `{"url": "file:///etc/passwd", "secret": "c2VjcmV0"}`, "url"},
		{"gopher url", `{"url": "gopher://127.0.0.1:6379/_INFO", "secret": "c2VjcmV0"}`, "url"},
		{"bad url", `{"url": "http://exa mple.com/", "secret": "c2VjcmV0"}`, "url"},
		{"url not a string", `{"url": 5, "secret": "c2VjcmV0"}`, "url"},
		{"missing secret", `{"url": "https://example.com/hook"}`, "secret"},
		{"empty secret", `{"url": "https://example.com/hook", "secret": ""}`, "secret"},
		{"secret not base64", `{"url": "https://example.com/hook", "secret": "whsec_not base64!"}`, "secret"},
		{"unknown field", `{"url": "https://example.com/hook", "secret": "c2VjcmV0", "headers": {}}`, "headers"},
		{"field case", `{"URL": "https://example.com/hook", "secret": "c2VjcmV0"}`, "URL"},
		{"bad api_url", `{"url": "https://example.com/hook", "secret": "c2VjcmV0", "api_url": "127.0.0.1:8080"}`, "api_url"},
		{"unix api_url", `{"url": "https://example.com/hook", "secret": "c2VjcmV0", "api_url": "unix:///run/docker.sock"}`, "api_url"},
		{"api_url with query", `{"url": "https://example.com/hook", "secret": "c2VjcmV0", "api_url": "http://127.0.0.1:8080/?a=b"}`, "api_url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := webhook.New(json.RawMessage(c.config), channel.Deps{})
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			channeltest.CheckConfigError(t, err, c.field)
			if strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("error %q quotes the secret", err)
			}
		})
	}
	_, err := webhook.New(json.RawMessage(`[1]`), channel.Deps{})
	if !errors.Is(err, channel.ErrInvalidConfig) {
		t.Errorf("array config: %v", err)
	}
}
