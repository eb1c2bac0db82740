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
		{"bad url", `{"url": "http://exa mple.com/", "secret": "c2VjcmV0"}`, "url"},
		{"url not a string", `{"url": 5, "secret": "c2VjcmV0"}`, "url"},
		{"missing secret", `{"url": "https://example.com/hook"}`, "secret"},
		{"empty secret", `{"url": "https://example.com/hook", "secret": ""}`, "secret"},
		{"secret not base64", `{"url": "https://example.com/hook", "secret": "whsec_not base64!"}`, "secret"},
		{"unknown field", `{"url": "https://example.com/hook", "secret": "c2VjcmV0", "headers": {}}`, "headers"},
		{"field case", `{"URL": "https://example.com/hook", "secret": "c2VjcmV0"}`, "URL"},
		{"bad api_url", `{"url": "https://example.com/hook", "secret": "c2VjcmV0", "api_url": "127.0.0.1:8080"}`, "api_url"},
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

func TestEndpoint(t *testing.T) {
	const slack = "https://hooks.slack.com/services/T0/B0/XXXX"
	for _, c := range []struct{ url, api, want string }{
		{slack, "", slack},
		{slack + "#frag", "", slack},
		{slack, "http://127.0.0.1:8080", "http://127.0.0.1:8080/services/T0/B0/XXXX"},
		{slack, "http://127.0.0.1:8080/", "http://127.0.0.1:8080/services/T0/B0/XXXX"},
		{slack, "https://proxy.example/slack/", "https://proxy.example/slack/services/T0/B0/XXXX"},
		{slack, "https://user:pw@proxy.example", "https://user:pw@proxy.example/services/T0/B0/XXXX"},
		{"https://x.logic.azure.com:443/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=a%2Bb", "http://[::1]:9",
			"http://[::1]:9/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sig=a%2Bb"},
		{"https://example.com/a%2Fb", "http://127.0.0.1/p", "http://127.0.0.1/p/a%2Fb"},
	} {
		got, err := webhook.Endpoint("webhook_url", c.url, c.api)
		if err != nil || got != c.want {
			t.Errorf("Endpoint(%q, %q) = %q, %v; want %q", c.url, c.api, got, err, c.want)
		}
	}
}

func TestFit(t *testing.T) {
	fence := func(s string) string { return "```" + strings.ReplaceAll(s, "&", "&amp;") + "```" }
	for _, c := range []struct {
		s     string
		limit int
		enc   func(string) string
		want  string
	}{
		{"short", 10, nil, "short"},
		{"exactly10!", 10, nil, "exactly10!"},
		{"eleven char", 10, nil, "eleven ch…"},
		{"żółć gęślą jaźń", 6, nil, "żółć …"},
		{"a&b&c&d", 16, fence, "```a&amp;b…```"},
		{"abc", 5, fence, "```…```"},
	} {
		if got := webhook.Fit(c.s, c.limit, c.enc); got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.s, c.limit, got, c.want)
		}
	}
}

func TestFacts(t *testing.T) {
	got := webhook.Facts(channeltest.Alert(channel.MonitorTimeout))
	want := []webhook.Fact{
		{"Monitor", `Nightly <backup> & "restore" (nightly-backup)`},
		{"Project", "infra's db"},
		{"Alert", "monitor.timeout"},
		{"Host", "db-1"},
		{"Exit code", "2"},
		{"Duration", "12.5s"},
	}
	if len(got) != len(want) {
		t.Fatalf("Facts = %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("fact %d = %q, want %q", i, got[i], want[i])
		}
	}
}
