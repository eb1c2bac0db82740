package webhook

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrVerify is wrapped by every error of Verify.
var ErrVerify = errors.New("webhook verification failed")

// tolerance is how far webhook-timestamp may be from the receiver's
// clock, as the Standard Webhooks libraries allow.
const tolerance = 5 * time.Minute

// Verify checks a received webhook the way a Standard Webhooks receiver
// does: secret is the channel's secret (base64, optionally prefixed
// with "whsec_"), header and body the request's. It fails unless
// webhook-signature holds a v1 signature of webhook-id,
// webhook-timestamp and body, and the timestamp is within five minutes
// of now.
func Verify(secret string, header http.Header, body []byte) error {
	return verifyAt(secret, header, body, time.Now())
}

func verifyAt(secret string, header http.Header, body []byte, now time.Time) error {
	key, err := signingKey(secret)
	if err != nil {
		return fmt.Errorf("%w: secret %v", ErrVerify, err)
	}
	id, ts, sigs := header.Get("webhook-id"), header.Get("webhook-timestamp"), header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: missing webhook-id, webhook-timestamp or webhook-signature", ErrVerify)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad webhook-timestamp", ErrVerify)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: webhook-timestamp too far from now", ErrVerify)
	}
	want := []byte(sign(key, id, ts, body))
	for _, sig := range strings.Fields(sigs) {
		if hmac.Equal([]byte(sig), want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no matching signature", ErrVerify)
}
