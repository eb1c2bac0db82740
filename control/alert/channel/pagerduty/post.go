package pagerduty

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

	"lookout/control/alert/channel"
)

// post sends body as JSON to target and classifies the outcome: nil for
// 2xx; a plain (retryable) error for network errors, 408, 429 and 5xx;
// channel.Permanent for any other status (3xx included). Errors never contain target,
// which may hold a secret.
func post(ctx context.Context, client *http.Client, target string, header http.Header, body any) error {
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return channel.Permanent(fmt.Errorf("%s: encoding the request: %w", Type, err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, &data)
	if err != nil {
		return channel.Permanent(fmt.Errorf("%s: %w", Type, err))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Lookout")
	// Redirects are not followed: the request carries a secret (a key in
	// a header or, for Telegram, the token in the path).
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirect.Do(req)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return fmt.Errorf("%s: sending: %w", Type, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("%s: the receiver answered %s: %s", Type, resp.Status, strings.TrimSpace(string(answer)))
	switch {
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		return err
	default:
		return channel.Permanent(err)
	}
}
