package webhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	key := []byte("another-test-key")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	body := []byte(`{"id":"msg_1"}`)
	ts := strconv.FormatInt(now.Unix(), 10)
	signed := func(sig string) http.Header {
		h := http.Header{}
		h.Set("webhook-id", "msg_1")
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		return h
	}
	good := sign(key, "msg_1", ts, body)
	for _, c := range []struct {
		name   string
		secret string
		header http.Header
		body   string
		now    time.Time
		ok     bool
	}{
		{"valid", secret, signed(good), string(body), now, true},
		{"valid, no prefix", base64.StdEncoding.EncodeToString(key), signed(good), string(body), now, true},
		{"one of several", secret, signed("v1,bm9wZQ== " + good), string(body), now, true},
		{"4 min late", secret, signed(good), string(body), now.Add(4 * time.Minute), true},
		{"6 min late", secret, signed(good), string(body), now.Add(6 * time.Minute), false},
		{"6 min early", secret, signed(good), string(body), now.Add(-6 * time.Minute), false},
		{"body changed", secret, signed(good), `{"id":"msg_2"}`, now, false},
		{"other key", "whsec_" + base64.StdEncoding.EncodeToString([]byte("x")), signed(good), string(body), now, false},
		{"bad secret", "whsec_!", signed(good), string(body), now, false},
		{"no signature", secret, signed(""), string(body), now, false},
		{"no v1 prefix", secret, signed(good[3:]), string(body), now, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := verifyAt(c.secret, c.header, []byte(c.body), c.now)
			if c.ok != (err == nil) {
				t.Errorf("verify: %v, want ok %v", err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrVerify) {
				t.Errorf("error %v does not wrap ErrVerify", err)
			}
		})
	}
}
