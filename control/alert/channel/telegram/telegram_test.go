package telegram_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/telegram"
)

const token = "123456:ABC-DEF_ghi"

func newChannel(t *testing.T, r *channeltest.Receiver) channel.Channel {
	t.Helper()
	cfg := `{"bot_token": "` + token + `", "chat_id": -1001234567890, "api_url": "` + r.URL + `"}`
	c, err := telegram.New(json.RawMessage(cfg), channel.Deps{HTTP: r.Client(), Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSend(t *testing.T) {
	for _, tc := range []struct{ typ, golden string }{
		{channel.MonitorFailed, "failed.txt"},
		{channel.MonitorRecovered, "recovered.txt"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			r := channeltest.NewReceiver(t)
			r.Respond(http.StatusOK, `{"ok":true,"result":{"message_id":1}}`)
			if err := newChannel(t, r).Send(context.Background(), channeltest.Alert(tc.typ)); err != nil {
				t.Fatal(err)
			}
			req := r.Last(t)
			channeltest.Golden(t, tc.golden, req.Dump("Content-Type", "User-Agent"))
			var m struct{ Text string }
			if err := json.Unmarshal(req.Body, &m); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"Nightly &lt;backup&gt; &amp; &#34;restore&#34;",
				"<pre>pg_dump: error: &lt;FATAL&gt;",
				`<a href="https://lookout.example.com/monitors/7c9e6679-7425-40de-944b-e07fc1f90ae7?tab=events&amp;page=1">`,
			} {
				if !strings.Contains(m.Text, want) {
					t.Errorf("text lacks %s:\n%s", want, m.Text)
				}
			}
		})
	}
}

func TestSendLongMessage(t *testing.T) {
	r := channeltest.NewReceiver(t)
	a := channeltest.Alert(channel.MonitorFailed)
	a.Event.Message = strings.Repeat("<&>", 5000)
	if err := newChannel(t, r).Send(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	var m struct{ Text string }
	if err := json.Unmarshal(r.Last(t).Body, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.Text, "…</pre>") || strings.Contains(m.Text, "&</pre>") {
		t.Errorf("message not cut cleanly: ...%s", m.Text[len(m.Text)-200:])
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestDefaultAddress(t *testing.T) {
	var got string
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		got = r.URL.String()
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(`{"ok":true}`))}, nil
	})}
	c, err := telegram.New(json.RawMessage(`{"bot_token": "`+token+`", "chat_id": "@lookout_alerts"}`), channel.Deps{HTTP: client})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(context.Background(), channeltest.Alert(channel.MonitorFailed)); err != nil {
		t.Fatal(err)
	}
	if want := "https://api.telegram.org/bot" + token + "/sendMessage"; got != want {
		t.Errorf("sent to %s, want %s", got, want)
	}
}

func TestSendFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		hangUp    bool
		permanent bool
	}{
		{name: "500", status: 500},
		{name: "429", status: 429},
		{name: "dropped connection", hangUp: true},
		{name: "400", status: 400, permanent: true},
		{name: "403", status: 403, permanent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := channeltest.NewReceiver(t)
			r.Respond(tc.status, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`)
			if tc.hangUp {
				r.HangUp()
			}
			err := newChannel(t, r).Send(context.Background(), channeltest.Alert(channel.MonitorFailed))
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if channel.IsPermanent(err) != tc.permanent {
				t.Errorf("permanent = %v, want %v: %v", !tc.permanent, tc.permanent, err)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("the error shows the bot token: %v", err)
			}
		})
	}
}

func TestSendCanceled(t *testing.T) {
	r := channeltest.NewReceiver(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := newChannel(t, r).Send(ctx, channeltest.Alert(channel.MonitorFailed))
	if !errors.Is(err, context.Canceled) || channel.IsPermanent(err) || strings.Contains(err.Error(), token) {
		t.Fatalf("err = %v, want a retryable context.Canceled without the token", err)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct{ config, field string }{
		{`{"bot_token": "1:a", "chat_id": 42}`, ""},
		{`{"bot_token": "1:a", "chat_id": "-10042"}`, ""},
		{`{"bot_token": "1:a", "chat_id": "@my_channel"}`, ""},
		{`{"bot_token": "1:a", "chat_id": 42, "api_url": "http://127.0.0.1:9/tg"}`, ""},
		{`{"chat_id": 42}`, "bot_token"},
		{`{"bot_token": "1:a/../x", "chat_id": 42}`, "bot_token"},
		{`{"bot_token": "abc", "chat_id": 42}`, "bot_token"},
		{`{"bot_token": "1:a"}`, "chat_id"},
		{`{"bot_token": "1:a", "chat_id": null}`, "chat_id"},
		{`{"bot_token": "1:a", "chat_id": ""}`, "chat_id"},
		{`{"bot_token": "1:a", "chat_id": 1.5}`, "chat_id"},
		{`{"bot_token": "1:a", "chat_id": true}`, "chat_id"},
		{`{"bot_token": "1:a", "chat_id": "@a"}`, "chat_id"},
		{`{"bot_token": "1:a", "chat_id": 42, "silent": true}`, "invalid field: silent: unknown field"},
		{`{"bot_token": "1:a", "chat_id": 42, "api_url": "https://"}`, "api_url"},
	} {
		_, err := telegram.New(json.RawMessage(tc.config), channel.Deps{})
		if tc.field == "" {
			if err != nil {
				t.Errorf("New(%s): %v", tc.config, err)
			}
			continue
		}
		if !errors.Is(err, channel.ErrInvalidConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("New(%s) = %v, want ErrInvalidConfig naming %s", tc.config, err, tc.field)
		}
	}
}
