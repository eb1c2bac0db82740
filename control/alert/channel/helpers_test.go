package channel_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
)

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
		got, err := channel.Endpoint("webhook_url", c.url, c.api)
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
		if got := channel.Fit(c.s, c.limit, c.enc); got != c.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", c.s, c.limit, got, c.want)
		}
	}
}

func TestFacts(t *testing.T) {
	got := channel.Facts(channeltest.Alert(channel.MonitorTimeout))
	want := []channel.Fact{
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

func TestSeverity(t *testing.T) {
	for typ, want := range map[string]string{
		channel.Test: channel.SeverityInfo, channel.MonitorRecovered: channel.SeverityRecovery,
		channel.CheckRecovered: channel.SeverityRecovery, channel.AgentOnline: channel.SeverityRecovery,
		channel.MonitorSlow: channel.SeverityWarning, channel.SSLWarning: channel.SeverityWarning,
		channel.MonitorFailed: channel.SeverityFailure, channel.SSLAlert: channel.SeverityFailure,
		channel.AgentOffline: channel.SeverityFailure, channel.MonitorMissed: channel.SeverityFailure,
	} {
		if got := (channel.Alert{Type: typ}).Severity(); got != want {
			t.Errorf("%s: %s, want %s", typ, got, want)
		}
	}
}

func TestMonitorTags(t *testing.T) {
	b, err := json.Marshal(channel.Monitor{UUID: "u", Name: "a<b"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"uuid":"u","kind":"","name":"a\u003cb","tags":[]}`; string(b) != want {
		t.Errorf("%s, want %s", b, want)
	}
}

func TestPost(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	channeltest.CheckDelivery(t, rx, func(ctx context.Context) error {
		return channel.Post(ctx, channel.Client(rx.Client()), rx.URL+"/secret-path", []byte(`{}`), nil)
	})
	for status, permanent := range map[int]bool{408: false, 307: true, 403: true} {
		rx.Respond(status, strings.Repeat("x", 1000))
		err := channel.PostJSON(t.Context(), channel.Client(rx.Client()), rx.URL, map[string]string{"a": "<b>"}, nil)
		if err == nil || channel.IsPermanent(err) != permanent || strings.Contains(err.Error(), "xxx") {
			t.Errorf("%d: %v, want permanent %v and no quote of the answer", status, err, permanent)
		}
	}
	if got := string(rx.Last(t).Body); got != `{"a":"<b>"}` {
		t.Errorf("body %s", got)
	}
}

// TestDefaultClientRefusesPrivateTargets: without a client of its own, a
// channel sends through DefaultHTTP, which refuses a receiver on loopback
// at once and for good; the receiver sees nothing.
func TestDefaultClientRefusesPrivateTargets(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	port := rx.URL[strings.LastIndex(rx.URL, ":"):]
	for _, client := range []*http.Client{channel.Client(nil), channel.DefaultHTTP()} {
		for _, addr := range []string{rx.URL, "http://localhost" + port, "http://[::ffff:127.0.0.1]" + port} {
			err := channel.Post(t.Context(), client, addr+"/hook", []byte(`{}`), nil)
			if !channel.IsPermanent(err) || !strings.HasPrefix(errors.Unwrap(err).Error(), "target not allowed: ") {
				t.Errorf("%s: %v, want a permanent \"target not allowed: ...\"", addr, err)
			}
		}
	}
	if n := len(rx.Requests()); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}
