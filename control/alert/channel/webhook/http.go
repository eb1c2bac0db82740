package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"lookout/control/alert/channel"
)

// UserAgent is the User-Agent of every request Lookout's webhook
// channels send.
const UserAgent = "Lookout"

// maxResponse bounds how much of a response is read (and thrown away)
// so the connection can be reused; maxQuoted is how much of it an
// error quotes.
const (
	maxResponse = 64 << 10
	maxQuoted   = 200
)

// Client returns the client a channel sends with: a copy of c (of a
// client with a 10 s timeout when c is nil) that does not follow
// redirects, so a signed request or a secret webhook URL is never
// replayed to another address; a 3xx answer is a permanent error.
func Client(c *http.Client) *http.Client {
	out := http.Client{Timeout: 10 * time.Second}
	if c != nil {
		out = *c
	}
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &out
}

// Marshal encodes v as compact JSON, leaving < > & as they are (the
// default \u003c escapes are for HTML, not for webhook bodies).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Post sends body to addr as a JSON POST with Lookout's User-Agent and
// the extra headers in header, and classifies the outcome the way
// channel.Channel.Send documents: a 2xx answer is success; a network
// error, 429 or 5xx is a plain (retryable) error; any other answer is
// channel.Permanent. Errors never quote addr, which for chat webhooks is
// itself the secret.
func Post(ctx context.Context, client *http.Client, addr string, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr, bytes.NewReader(body))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return channel.Permanent(fmt.Errorf("webhook request: %w", err))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("webhook post: %w", err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("webhook receiver answered %s%s", resp.Status, quote(got))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return err
	}
	return channel.Permanent(err)
}

// quote returns the start of a response body for an error message.
func quote(body []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(body), "?"))
	if s == "" {
		return ""
	}
	if len(s) > maxQuoted {
		s = strings.ToValidUTF8(s[:maxQuoted], "") + "..."
	}
	return fmt.Sprintf(": %q", s)
}
