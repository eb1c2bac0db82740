package discord_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/discord"
)

const hookPath = "/api/webhooks/123456789012345678/TOKEN-xyz"

// newChannel makes a channel whose webhook_url is Discord's and whose
// api_url sends it to rx.
func newChannel(t *testing.T, rx *channeltest.Receiver) channel.Channel {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"webhook_url": "https://discord.com" + hookPath, "api_url": rx.URL})
	ch, err := discord.New(raw, channel.Deps{HTTP: channeltest.HTTP(), Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestSend(t *testing.T) {
	recovered := channeltest.Alert(channel.CheckRecovered)
	recovered.Event = nil
	for name, a := range map[string]channel.Alert{
		"failed":    channeltest.Alert(channel.MonitorFailed),
		"warning":   channeltest.Alert(channel.SSLWarning),
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
	a.Event.Message = strings.Repeat("x```y ", 2000)
	a.Monitor.DisplayName = strings.Repeat("n", 1000)
	if err := newChannel(t, rx).Send(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Content string
		Embeds  []struct {
			Title, Description string
			Fields             []struct{ Name, Value string }
		}
	}
	if err := json.Unmarshal(rx.Last(t).Body, &msg); err != nil {
		t.Fatal(err)
	}
	e := msg.Embeds[0]
	total := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description) + len("Lookout")
	for _, f := range e.Fields {
		total += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
	}
	for _, c := range []struct {
		what     string
		n, limit int
	}{
		{"content", utf8.RuneCountInString(msg.Content), 2000},
		{"title", utf8.RuneCountInString(e.Title), 256},
		{"description", utf8.RuneCountInString(e.Description), 4096},
		{"embed", total, 6000},
	} {
		if c.n > c.limit {
			t.Errorf("%s of %d characters, limit %d", c.what, c.n, c.limit)
		}
	}
	if d := e.Description; !strings.HasSuffix(d, "…\n```") || strings.Count(d, "```") != 2 || utf8.RuneCountInString(d) < 4000 {
		t.Errorf("description %.40q...%q", d, d[len(d)-20:])
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
		{"valid", `{"webhook_url": "https://discord.com/api/webhooks/1/t"}`, ""},
		{"api_url", `{"webhook_url": "https://discord.com/api/webhooks/1/t", "api_url": "http://127.0.0.1:9999/"}`, ""},
		{"missing", `{"api_url": "http://127.0.0.1:9999"}`, "webhook_url"},
		{"relative", `{"webhook_url": "/api/webhooks/1/t"}`, "webhook_url"},
		{"not http", `{"webhook_url": "ws://discord.com/api/webhooks/1/t"}`, "webhook_url"},
		{"unknown field", `{"webhook_url": "https://discord.com/api/webhooks/1/t", "username": "bot"}`, "username"},
		{"bad api_url", `{"webhook_url": "https://discord.com/api/webhooks/1/t", "api_url": "http://127.0.0.1:9999#x"}`, "api_url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := discord.New(json.RawMessage(c.config), channel.Deps{})
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

func TestMarkdown(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	a := channeltest.Alert(channel.MonitorFailed)
	a.Monitor.DisplayName = "# *db* _backup_ [x](https://evil.example) @everyone"
	a.Event.Message, a.Event.ExitCode = "", nil
	if err := newChannel(t, rx).Send(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	var msg struct{ Content string }
	if err := json.Unmarshal(rx.Last(t).Body, &msg); err != nil {
		t.Fatal(err)
	}
	want := `\# \*db\* \_backup\_ \[x\](https://evil.example) @everyone failed`
	if msg.Content != want {
		t.Errorf("content %q, want %q", msg.Content, want)
	}
}
