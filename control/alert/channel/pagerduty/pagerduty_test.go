package pagerduty_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/pagerduty"
)

func newChannel(t *testing.T, r *channeltest.Receiver) channel.Channel {
	t.Helper()
	cfg := `{"routing_key": "R0UT1NGKEY", "api_url": "` + r.URL + `/"}`
	c, err := pagerduty.New(json.RawMessage(cfg), channel.Deps{HTTP: r.Client(), Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSend(t *testing.T) {
	for _, tc := range []struct{ typ, golden string }{
		{channel.MonitorFailed, "trigger.txt"},
		{channel.MonitorSlow, "warning.txt"},
		{channel.MonitorRecovered, "resolve.txt"},
		{channel.Test, "test.txt"},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			r := channeltest.NewReceiver(t)
			r.Respond(http.StatusAccepted, `{"status":"success","message":"Event processed","dedup_key":"x"}`)
			if err := newChannel(t, r).Send(context.Background(), channeltest.Alert(tc.typ)); err != nil {
				t.Fatal(err)
			}
			channeltest.Golden(t, tc.golden, r.Last(t).Dump("Content-Type", "User-Agent"))
		})
	}
}

func TestSendNoPanelLinkNoEvent(t *testing.T) {
	r := channeltest.NewReceiver(t)
	a := channeltest.Alert(channel.MonitorMissed)
	a.Event, a.PanelURL, a.OccurredAt = nil, "", time.Time{}
	if err := newChannel(t, r).Send(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	body := string(r.Last(t).Body)
	if want := `"timestamp":"` + channeltest.Now.Format(time.RFC3339) + `"`; !strings.Contains(body, want) {
		t.Errorf("body lacks %s (the clock's time): %s", want, body)
	}
	for _, absent := range []string{`"links"`, `"message"`, `"client_url"`} {
		if strings.Contains(body, absent) {
			t.Errorf("body has %s: %s", absent, body)
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
		{name: "503", status: 503},
		{name: "429", status: 429},
		{name: "dropped connection", hangUp: true},
		{name: "400", status: 400, permanent: true},
		{name: "404", status: 404, permanent: true},
		{name: "307 not followed", status: 307, permanent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := channeltest.NewReceiver(t)
			r.Respond(tc.status, `{"status":"invalid event","message":"Event object is invalid"}`)
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
			if strings.Contains(err.Error(), r.URL) {
				t.Errorf("error names the address: %v", err)
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
		{`{"routing_key": "k"}`, ""},
		{`{"routing_key": "k", "api_url": "http://127.0.0.1:8080/pd"}`, ""},
		{`{}`, "routing_key"},
		{`{"routing_key": ""}`, "routing_key"},
		{`{"routing_key": 42}`, "invalid field: routing_key: must be a JSON string"},
		{`{"routing_key": "k", "severity": "low"}`, "invalid field: severity: unknown field"},
		{`{"Routing_Key": "k"}`, "invalid field: Routing_Key: unknown field"},
		{`{"routing_key": "k", "api_url": "ftp://x"}`, "api_url"},
		{`{"routing_key": "k", "api_url": "/v2"}`, "api_url"},
		{`{"routing_key": "k", "api_url": "https://x/?a=b"}`, "api_url"},
		{`[]`, "not a JSON object"},
		{``, "invalid field: routing_key: is required"},
		{`{"routing_key": "k"} {}`, "not a JSON object"},
	} {
		_, err := pagerduty.New(json.RawMessage(tc.config), channel.Deps{})
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
