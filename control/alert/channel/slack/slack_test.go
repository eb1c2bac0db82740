package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/slack"
)

const hookPath = "/services/T0001/B0001/XXXXXXXXXXXXXXXXXXXXXXXX"

// newChannel makes a channel whose webhook_url is Slack's and whose
// api_url sends it to rx.
func newChannel(t *testing.T, rx *channeltest.Receiver) channel.Channel {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"webhook_url": "https://hooks.slack.com" + hookPath, "api_url": rx.URL})
	ch, err := slack.New(raw, channel.Deps{HTTP: channeltest.HTTP(), Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestSend(t *testing.T) {
	recovered := channeltest.Alert(channel.MonitorRecovered)
	recovered.Event = nil
	for name, a := range map[string]channel.Alert{
		"failed":    channeltest.Alert(channel.MonitorFailed),
		"slow":      channeltest.Alert(channel.MonitorSlow),
		"recovered": recovered,
	} {
		t.Run(name, func(t *testing.T) {
			rx := channeltest.NewReceiver(t)
			if err := newChannel(t, rx).Send(t.Context(), a); err != nil {
				t.Fatal(err)
			}
			req := rx.Last(t)
			channeltest.CheckPost(t, req)
			if req.URI != hookPath {
				t.Errorf("request to %s, want %s (api_url replaces the host)", req.URI, hookPath)
			}
			channeltest.Golden(t, name+".json", req.Dump())
		})
	}
}

func TestLongMessage(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	a := channeltest.Alert(channel.MonitorFailed)
	a.Event.Message = strings.Repeat("<&> ", 5000)
	if err := newChannel(t, rx).Send(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Blocks []struct {
			Type string
			Text *struct{ Text string }
		}
	}
	if err := json.Unmarshal(rx.Last(t).Body, &msg); err != nil {
		t.Fatal(err)
	}
	var code string
	for _, b := range msg.Blocks {
		if b.Type == "section" && b.Text != nil {
			code = b.Text.Text
		}
	}
	if n := utf8.RuneCountInString(code); n > 3000 || n < 2900 {
		t.Errorf("message block of %d characters, want at most 3000 and not far less", n)
	}
	if !strings.HasPrefix(code, "```\n&lt;&amp;&gt; ") || !strings.HasSuffix(code, "…\n```") {
		t.Errorf("message block %.40q...%q", code, code[len(code)-20:])
	}
}

func TestDelivery(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	ch := newChannel(t, rx)
	channeltest.CheckDelivery(t, rx, func(ctx context.Context) error {
		return ch.Send(ctx, channeltest.Alert(channel.MonitorFailed))
	})
}

func TestConfig(t *testing.T) {
	for _, c := range []struct{ name, config, field string }{
		{"valid", `{"webhook_url": "https://hooks.slack.com/services/T/B/X"}`, ""},
		{"other host", `{"webhook_url": "http://mattermost.internal/hooks/x"}`, ""},
		{"api_url", `{"webhook_url": "https://hooks.slack.com/services/T/B/X", "api_url": "http://127.0.0.1:9999"}`, ""},
		{"missing", `{}`, "webhook_url"},
		{"empty", `{"webhook_url": ""}`, "webhook_url"},
		{"relative", `{"webhook_url": "hooks.slack.com/services/T/B/X"}`, "webhook_url"},
		{"not http", `{"webhook_url": "javascript:alert(1)"}`, "webhook_url"},
		{"not a string", `{"webhook_url": ["https://hooks.slack.com/services/T/B/X"]}`, "webhook_url"},
		{"unknown field", `{"webhook_url": "https://hooks.slack.com/services/T/B/X", "channel": "#ops"}`, "channel"},
		{"bad api_url", `{"webhook_url": "https://hooks.slack.com/services/T/B/X", "api_url": "localhost"}`, "api_url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := slack.New(json.RawMessage(c.config), channel.Deps{})
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			channeltest.CheckConfigError(t, err, c.field)
		})
	}
}
