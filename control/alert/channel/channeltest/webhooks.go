package channeltest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"lookout/control/alert/channel"
)

// CheckPost checks that req is a JSON POST from Lookout.
func CheckPost(t testing.TB, req Request) {
	t.Helper()
	if req.Method != http.MethodPost {
		t.Errorf("method %s, want POST", req.Method)
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if ua := req.Header.Get("User-Agent"); ua != "Lookout" {
		t.Errorf("User-Agent %q, want Lookout", ua)
	}
}

// CheckDelivery checks how send, which delivers one alert to rx, reads
// the receiver's answers: 2xx is success; 429, 5xx, a dropped
// connection and a cancelled context are retryable errors; other 4xx
// are channel.Permanent. Errors must not quote rx's URL (a chat
// webhook's URL is its secret) nor its answer (which may be an internal
// service's). rx answers 202 afterwards.
func CheckDelivery(t *testing.T, rx *Receiver, send func(context.Context) error) {
	t.Helper()
	const ok, retry, permanent = "ok", "retryable", "permanent"
	const answer = "the receiver's answer"
	cases := []struct {
		name   string
		status int // 0: hang up
		want   string
	}{
		{"200", http.StatusOK, ok},
		{"204", http.StatusNoContent, ok},
		{"400", http.StatusBadRequest, permanent},
		{"404", http.StatusNotFound, permanent},
		{"429", http.StatusTooManyRequests, retry},
		{"500", http.StatusInternalServerError, retry},
		{"503", http.StatusServiceUnavailable, retry},
		{"hang up", 0, retry},
	}
	defer rx.Respond(http.StatusAccepted, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.status == 0 {
				rx.HangUp()
			} else {
				rx.Respond(c.status, `{"error":"`+answer+`"}`)
			}
			checkOutcome(t, send(t.Context()), c.want, rx.URL)
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		rx.Respond(http.StatusAccepted, "")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := send(ctx)
		checkOutcome(t, err, retry, rx.URL)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v does not wrap context.Canceled", err)
		}
	})
}

func checkOutcome(t *testing.T, err error, want, url string) {
	t.Helper()
	switch {
	case want == "ok" && err != nil:
		t.Fatalf("send: %v, want success", err)
	case want != "ok" && err == nil:
		t.Fatalf("send succeeded, want a %s error", want)
	case err == nil:
		return
	case channel.IsPermanent(err) != (want == "permanent"):
		t.Errorf("send: %v: permanent %v, want %s", err, channel.IsPermanent(err), want)
	}
	if strings.Contains(err.Error(), url) {
		t.Errorf("error %q quotes the receiver's URL", err)
	}
	if strings.Contains(err.Error(), "receiver's answer") {
		t.Errorf("error %q quotes the receiver's answer", err)
	}
}

// CheckConfigError checks that err is a config error about field: it
// wraps channel.ErrInvalidConfig and says "invalid field: <field>:".
func CheckConfigError(t testing.TB, err error, field string) {
	t.Helper()
	if !errors.Is(err, channel.ErrInvalidConfig) {
		t.Fatalf("error %v, want one wrapping channel.ErrInvalidConfig", err)
	}
	if !strings.Contains(err.Error(), "invalid field: "+field+":") {
		t.Errorf("error %q does not name field %s", err, field)
	}
}
