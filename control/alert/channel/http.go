package channel

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
)

// UserAgent is the User-Agent of every request Lookout's channels send.
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
// redirects, so a signed request, a key in a header or a secret URL is
// never replayed to another address; a 3xx answer is a permanent error.
func Client(c *http.Client) *http.Client {
	out := http.Client{Timeout: 10 * time.Second}
	if c != nil {
		out = *c
	}
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &out
}

// Marshal encodes v as compact JSON, leaving < > & as they are (the
// default \u003c escapes are for HTML, not for request bodies).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// PostJSON is Post of v encoded by Marshal.
func PostJSON(ctx context.Context, client *http.Client, addr string, v any, header http.Header) error {
	body, err := Marshal(v)
	if err != nil {
		return Permanent(fmt.Errorf("encoding the request: %w", err))
	}
	return Post(ctx, client, addr, body, header)
}

// Post sends body to addr as a JSON POST with Lookout's User-Agent and
// the extra headers in header, and classifies the outcome the way
// Channel.Send documents: a 2xx answer is success; a network error, 408,
// 429 or 5xx is a plain (retryable) error; any other answer (3xx
// included: give it a client from Client) is Permanent. At most 64 KiB
// of the answer is read, and errors quote at most 200 characters of it.
// Errors never quote addr, which may hold a secret (a chat webhook's
// URL, a bot token in the path).
func Post(ctx context.Context, client *http.Client, addr string, body []byte, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr, bytes.NewReader(body))
	if err != nil {
		return Permanent(fmt.Errorf("request: %w", unwrapURL(err)))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("post: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("receiver answered %s%s", resp.Status, quote(got))
	switch {
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return err
	default:
		return Permanent(err)
	}
}

// unwrapURL drops the *url.Error around err, whose text holds the
// address.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
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
