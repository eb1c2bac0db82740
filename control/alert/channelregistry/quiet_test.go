package channelregistry_test

import (
	"context"
	"encoding/json"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
	"time"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channelregistry"
)

// TestEveryChannelTellsHowLongItWasDown: a recovery with down_seconds
// says "recovered after 2h 5m", and a reminder "is still down (down for
// ...)", in the message of every channel type (the webhook's body has the
// fields; a PagerDuty resolve event carries no text).
func TestEveryChannelTellsHowLongItWasDown(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	mail := channeltest.StartSMTP(t, channeltest.SMTPOptions{})
	r := channelregistry.New(channel.Deps{HTTP: channeltest.HTTP(), Now: channeltest.Clock,
		SMTP: channel.SMTPSettings{Addr: mail.Addr, From: "alerts@example.com"}})
	configs := map[string]string{
		"email":     `{"to": ["ops@example.com"]}`,
		"slack":     `{"webhook_url": "https://hooks.slack.com/services/T/B/X", "api_url": "` + rx.URL + `"}`,
		"discord":   `{"webhook_url": "https://discord.com/api/webhooks/1/x", "api_url": "` + rx.URL + `"}`,
		"teams":     `{"webhook_url": "https://x.logic.azure.com/workflows/1?sig=a", "api_url": "` + rx.URL + `"}`,
		"pagerduty": `{"routing_key": "R0UT1NG", "api_url": "` + rx.URL + `"}`,
		"opsgenie":  `{"api_key": "k", "api_url": "` + rx.URL + `"}`,
		"telegram":  `{"bot_token": "1:a", "chat_id": -100, "api_url": "` + rx.URL + `"}`,
		"webhook":   `{"url": "https://example.com/hook", "secret": "whsec_c2VjcmV0", "api_url": "` + rx.URL + `"}`,
		"shoutrrr":  `{"url": "generic+` + rx.URL + `/hook"}`,
	}
	if len(configs) != len(r.Types()) {
		t.Fatalf("types %v: give each a config here", r.Types())
	}
	recovered := channeltest.Alert(channel.MonitorRecovered)
	down := int64(2*3600 + 5*60 + 9)
	since := recovered.OccurredAt.Add(-time.Duration(down) * time.Second)
	recovered.DownSeconds, recovered.DownSince = &down, &since
	reminder := channeltest.Alert(channel.MonitorReminder)
	reminder.DownSince, reminder.OriginalAlertID = &since, "0f0e0d0c-0b0a-4909-8807-060504030201"
	for _, typ := range r.Types() {
		c, err := r.New(typ, json.RawMessage(configs[typ]))
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		for _, tc := range []struct {
			a    channel.Alert
			want string
		}{{recovered, "recovered after 2 h 5 min down"}, {reminder, "is still down (down for 2 h 5 min)"}} {
			if err := c.Send(context.Background(), tc.a); err != nil {
				t.Fatalf("%s %s: %v", typ, tc.a.Type, err)
			}
			var body string
			if typ == "email" {
				msgs := mail.Messages()
				b, _ := io.ReadAll(quotedprintable.NewReader(strings.NewReader(string(msgs[len(msgs)-1].Data))))
				body = string(b)
			} else {
				body = string(rx.Last(t).Body)
			}
			want := tc.want
			switch {
			case typ == "webhook" && tc.a.Type == channel.MonitorRecovered:
				want = `"down_since":"2026-03-14T13:03:17Z","down_seconds":7509`
			case typ == "webhook":
				want = `"original_alert_id":"0f0e0d0c-0b0a-4909-8807-060504030201","down_since":"2026-03-14T13:03:17Z"`
			case typ == "pagerduty" && tc.a.Type == channel.MonitorRecovered:
				want = `"event_action":"resolve"` // a resolve event carries no text
			}
			if !strings.Contains(body, want) {
				t.Errorf("%s %s: no %q in\n%s", typ, tc.a.Type, want, body)
			}
		}
	}
}
