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
	"time"

	"lookout/internal/netguard"
)

// UserAgent is the User-Agent of every request Lookout's channels send.
const UserAgent = "Lookout"

// maxResponse bounds how much of a response is read (and thrown away)
// so the connection can be reused.
const maxResponse = 64 << 10

// DefaultHTTP returns the client channels send with when none is given:
// a 10 s timeout, and a transport that refuses loopback, private,
// link-local ... addresses (internal/netguard) at each dial, since a
// channel's address is a tenant's and the request leaves from inside the
// operator's network.
func DefaultHTTP() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: netguard.New(netguard.Options{}).Transport()}
}

// Client returns the client a channel sends with: a copy of c (of
// DefaultHTTP when c is nil) that does not follow redirects, so a signed
// request, a key in a header or a secret URL is never replayed to another
// address; a 3xx answer is a permanent error.
func Client(c *http.Client) *http.Client {
	if c == nil {
		c = DefaultHTTP()
	}
	out := *c
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
// 429 or 5xx is a plain (retryable) error; an address the client's dialer
// refused (netguard) and any other answer (3xx included: give it a client
// from Client) are Permanent. At most 64 KiB of the answer is read and
// none of it is quoted: errors say the status only, since the receiver's
// answer is not the tenant's to read (it may be an internal service's).
// Errors never quote addr either, which may hold a secret (a chat
// webhook's URL, a bot token in the path).
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
	var refused *netguard.Error
	if errors.As(err, &refused) {
		return Permanent(refused)
	}
	if err != nil {
		return fmt.Errorf("post: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("receiver answered %s", resp.Status)
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
