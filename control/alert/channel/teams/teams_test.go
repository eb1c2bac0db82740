package teams_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/teams"
)

const hookURI = "/workflows/0a1b2c/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=s3cr3t"

// newChannel makes a channel whose webhook_url is a Workflows URL and
// whose api_url sends it to rx.
func newChannel(t *testing.T, rx *channeltest.Receiver) channel.Channel {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"webhook_url": "https://prod-01.westeurope.logic.azure.com:443" + hookURI, "api_url": rx.URL})
	ch, err := teams.New(raw, channel.Deps{HTTP: channeltest.HTTP(), Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestSend(t *testing.T) {
	recovered := channeltest.Alert(channel.AgentOnline)
	recovered.Event = nil
	recovered.PanelURL = ""
	for name, a := range map[string]channel.Alert{
		"failed":    channeltest.Alert(channel.MonitorMissed),
		"test":      channeltest.Alert(channel.Test),
		"recovered": recovered, // no event, no link: no message, no action
	} {
		t.Run(name, func(t *testing.T) {
			rx := channeltest.NewReceiver(t)
			if err := newChannel(t, rx).Send(t.Context(), a); err != nil {
				t.Fatal(err)
			}
			req := rx.Last(t)
			channeltest.CheckPost(t, req)
			if req.URI != hookURI {
				t.Errorf("request to %s, want %s (api_url replaces the host)", req.URI, hookURI)
			}
			channeltest.Golden(t, name+".json", req.Dump())
		})
	}
}

func TestLongMessage(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	a := channeltest.Alert(channel.MonitorFailed)
	a.Event.Message = strings.Repeat("línea de registro\n", 4000)
	if err := newChannel(t, rx).Send(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	req := rx.Last(t)
	if len(req.Body) > 28<<10 {
		t.Errorf("body of %d bytes, Teams takes about 28 KB", len(req.Body))
	}
	var msg struct {
		Attachments []struct {
			Content struct {
				Body []struct {
					Type    string
					Inlines []struct{ Text string }
				}
			}
		}
	}
	if err := json.Unmarshal(req.Body, &msg); err != nil {
		t.Fatal(err)
	}
	var text string
	for _, b := range msg.Attachments[0].Content.Body {
		if b.Type == "RichTextBlock" {
			text = b.Inlines[0].Text
		}
	}
	if n := utf8.RuneCountInString(text); n != 6000 || !strings.HasSuffix(text, "…") {
		t.Errorf("message of %d characters ending %q, want 6000 ending in …", n, text[len(text)-10:])
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
		{"valid", `{"webhook_url": "https://prod-01.westeurope.logic.azure.com:443/workflows/1?sig=x"}`, ""},
		{"api_url", `{"webhook_url": "https://prod-01.westeurope.logic.azure.com/workflows/1", "api_url": "https://proxy.internal/teams"}`, ""},
		{"url for webhook_url", `{"url": "https://prod-01.westeurope.logic.azure.com/workflows/1"}`, "url"},
		{"empty object", `{}`, "webhook_url"},
		{"no host", `{"webhook_url": "https:///workflows/1"}`, "webhook_url"},
		{"null", `{"webhook_url": null}`, "webhook_url"},
		{"unknown field", `{"webhook_url": "https://prod-01.westeurope.logic.azure.com/workflows/1", "title": "x"}`, "title"},
		{"bad api_url", `{"webhook_url": "https://prod-01.westeurope.logic.azure.com/workflows/1", "api_url": "mailto:a@b"}`, "api_url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := teams.New(json.RawMessage(c.config), channel.Deps{})
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
