package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/webhook"
)

// key is the signing key of the tests; secret is how a config holds it.
var (
	key    = []byte("lookout-test-signing-key-0123456")
	secret = "whsec_" + base64.StdEncoding.EncodeToString(key)
)

func newChannel(t *testing.T, config map[string]string) channel.Channel {
	t.Helper()
	raw, _ := json.Marshal(config)
	ch, err := webhook.New(raw, channel.Deps{HTTP: channeltest.HTTP(), Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestSend(t *testing.T) {
	recovered := channeltest.Alert(channel.MonitorRecovered)
	recovered.Event = nil
	recovered.Monitor.Tags = nil
	// Expected at 14:00 in Berlin (13:00 UTC), missed when an hour of grace
	// ran out; the last run was the day before.
	missed := channeltest.Alert(channel.MonitorMissed)
	missed.ExpectedAt = time.Date(2026, 3, 14, 13, 0, 0, 0, time.UTC)
	missed.OccurredAt, missed.LastPingAt = missed.ExpectedAt.Add(time.Hour), missed.ExpectedAt.Add(-24*time.Hour+4*time.Second)
	missed.Event = &channel.Event{EventType: "missed", Timestamp: missed.OccurredAt, ReceivedAt: missed.OccurredAt.Add(200 * time.Millisecond)}
	missed.Monitor.ExpectedIntervalSeconds, missed.Monitor.Schedule, missed.Monitor.Timezone = 0, "0 14 * * *", "Europe/Berlin"
	for name, a := range map[string]channel.Alert{
		"failed":    channeltest.Alert(channel.MonitorFailed),
		"recovered": recovered, // no event: "event" is left out
		"missed":    missed,    // on a schedule in a zone
	} {
		t.Run(name, func(t *testing.T) {
			rx := channeltest.NewReceiver(t)
			ch := newChannel(t, map[string]string{"url": rx.URL + "/hooks/lookout?team=ops", "secret": secret})
			if err := ch.Send(t.Context(), a); err != nil {
				t.Fatal(err)
			}
			req := rx.Last(t)
			channeltest.CheckPost(t, req)
			if req.URI != "/hooks/lookout?team=ops" {
				t.Errorf("request to %s", req.URI)
			}
			channeltest.Golden(t, name+".txt", req.Dump("Content-Type", "User-Agent", "Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"))
			checkSignature(t, req, a.ID)
			var p webhook.Payload
			if err := json.Unmarshal(req.Body, &p); err != nil || p.ID != a.ID || p.Type != a.Type || p.PanelURL != a.PanelURL {
				t.Errorf("body decodes to %+v, %v", p, err)
			}
		})
	}
}

// checkSignature recomputes the Standard Webhooks signature of req.
func checkSignature(t *testing.T, req channeltest.Request, id string) {
	t.Helper()
	if got := req.Header.Get("webhook-id"); got != id {
		t.Errorf("webhook-id %q, want the alert id %q", got, id)
	}
	ts := req.Header.Get("webhook-timestamp")
	if want := strconv.FormatInt(channeltest.Now.Unix(), 10); ts != want {
		t.Errorf("webhook-timestamp %q, want %s", ts, want)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(req.Body)
	if got, want := req.Header.Get("webhook-signature"), "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)); got != want {
		t.Errorf("webhook-signature %q, want %q", got, want)
	}
}

func TestSecretWithoutPrefix(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	ch := newChannel(t, map[string]string{"url": rx.URL, "secret": base64.StdEncoding.EncodeToString(key)})
	a := channeltest.Alert(channel.Test)
	if err := ch.Send(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	checkSignature(t, rx.Last(t), a.ID)
}

func TestDelivery(t *testing.T) {
	rx := channeltest.NewReceiver(t)
	ch := newChannel(t, map[string]string{"url": "https://hooks.example.com/lookout", "secret": secret, "api_url": rx.URL})
	channeltest.CheckDelivery(t, rx, func(ctx context.Context) error {
		return ch.Send(ctx, channeltest.Alert(channel.MonitorFailed))
	})
}

// TestNoRedirect checks that a signed request is not replayed to the
// address a redirect names.
func TestNoRedirect(t *testing.T) {
	elsewhere := channeltest.NewReceiver(t)
	redirect := httptest.NewServer(http.RedirectHandler(elsewhere.URL, http.StatusTemporaryRedirect))
	defer redirect.Close()
	ch := newChannel(t, map[string]string{"url": redirect.URL, "secret": secret})
	err := ch.Send(t.Context(), channeltest.Alert(channel.MonitorFailed))
	if !channel.IsPermanent(err) {
		t.Errorf("send: %v, want a permanent error", err)
	}
	if n := len(elsewhere.Requests()); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
}
