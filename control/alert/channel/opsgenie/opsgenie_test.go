package opsgenie_test

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
	"lookout/control/alert/channel/opsgenie"
)

func newChannel(t *testing.T, r *channeltest.Receiver) channel.Channel {
	t.Helper()
	cfg := `{"api_key": "0pen-5esame", "region": "eu", "api_url": "` + r.URL + `"}`
	c, err := opsgenie.New(json.RawMessage(cfg), channel.Deps{HTTP: r.Client(), Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSend(t *testing.T) {
	for _, tc := range []struct{ typ, golden string }{
		{channel.MonitorFailed, "create.txt"},
		{channel.SSLWarning, "create-warning.txt"},
		{channel.MonitorRecovered, "close.txt"},
		{channel.Test, "test.txt"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			r := channeltest.NewReceiver(t)
			r.Respond(http.StatusAccepted, `{"result":"Request will be processed","took":0.3,"requestId":"x"}`)
			if err := newChannel(t, r).Send(context.Background(), channeltest.Alert(tc.typ)); err != nil {
				t.Fatal(err)
			}
			channeltest.Golden(t, tc.golden, r.Last(t).Dump("Authorization", "Content-Type", "User-Agent"))
		})
	}
}

func TestSendLimits(t *testing.T) {
	r := channeltest.NewReceiver(t)
	a := channeltest.Alert(channel.MonitorFailed)
	a.Monitor.DisplayName = strings.Repeat("é", 200)
	for i := range 30 {
		a.Monitor.Tags = append(a.Monitor.Tags, strings.Repeat("t", i*3))
	}
	if err := newChannel(t, r).Send(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Message string
		Tags    []string
	}
	if err := json.Unmarshal(r.Last(t).Body, &body); err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(body.Message)); n != 130 || !strings.HasSuffix(body.Message, "…") {
		t.Errorf("message has %d characters: %q", n, body.Message)
	}
	if len(body.Tags) != 20 {
		t.Errorf("%d tags, want 20", len(body.Tags))
	}
	for _, tag := range body.Tags {
		if len([]rune(tag)) > 50 {
			t.Errorf("tag of %d characters", len([]rune(tag)))
		}
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestRegion(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{`{"api_key": "k"}`, "https://api.opsgenie.com/v2/alerts"},
		{`{"api_key": "k", "region": "us"}`, "https://api.opsgenie.com/v2/alerts"},
		{`{"api_key": "k", "region": "eu"}`, "https://api.eu.opsgenie.com/v2/alerts"},
		{`{"api_key": "k", "region": "eu", "api_url": "http://proxy:8080/og/"}`, "http://proxy:8080/og/v2/alerts"},
	} {
		var got string
		client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			got = r.URL.String()
			return &http.Response{StatusCode: 202, Body: io.NopCloser(strings.NewReader("{}"))}, nil
		})}
		c, err := opsgenie.New(json.RawMessage(tc.config), channel.Deps{HTTP: client})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Send(context.Background(), channeltest.Alert(channel.MonitorFailed)); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: sent to %s, want %s", tc.config, got, tc.want)
		}
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
		{name: "401", status: 401, permanent: true},
		{name: "422", status: 422, permanent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := channeltest.NewReceiver(t)
			r.Respond(tc.status, `{"message":"Request body is not processable","took":0.001}`)
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
		})
	}
}

func TestSendCanceled(t *testing.T) {
	r := channeltest.NewReceiver(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := newChannel(t, r).Send(ctx, channeltest.Alert(channel.MonitorFailed))
	if !errors.Is(err, context.Canceled) || channel.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable context.Canceled", err)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct{ config, field string }{
		{`{"api_key": "k"}`, ""},
		{`{"api_key": "k", "region": "eu", "api_url": "https://og.internal"}`, ""},
		{`{}`, "api_key"},
		{`{"api_key": ""}`, "api_key"},
		{`{"api_key": "a b"}`, "api_key"},
		{`{"api_key": "k\r\nX-Evil: 1"}`, "api_key"},
		{`{"api_key": "k", "region": "EU"}`, "region"},
		{`{"api_key": "k", "region": "asia"}`, "region"},
		{`{"api_key": "k", "region": 1}`, "region"},
		{`{"api_key": "k", "team": "ops"}`, "invalid field: team: unknown field"},
		{`{"API_KEY": "k"}`, "invalid field: API_KEY: unknown field"},
		{`{"api_key": "k", "api_url": "opsgenie.com"}`, "api_url"},
		{`null`, "api_key"},
	} {
		_, err := opsgenie.New(json.RawMessage(tc.config), channel.Deps{})
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
