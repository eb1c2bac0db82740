package shoutrrr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"lookout/control/alert/channel"
	"lookout/internal/netguard"
)

// maxResponse bounds how much of an answer a service may read.
const maxResponse = 64 << 10

// maxSummary bounds the summary line, in characters.
const maxSummary = 300

// Send delivers a through the service. The outcome is judged by what the
// HTTP exchange was, not by the library's error text (which differs by
// service): a 2xx answer to the last request is success; a network
// error, 408, 429 or 5xx is retryable; an address the client's dialer
// refused (netguard), any other answer, and a message the service would
// not send at all are Permanent. Errors quote neither the service URL
// (its token) nor the answer.
func (c *Channel) Send(ctx context.Context, a channel.Alert) error {
	if err := c.send(ctx, a); err != nil {
		return fmt.Errorf("%s %s: %w", Type, c.scheme, err)
	}
	return nil
}

func (c *Channel) send(ctx context.Context, a channel.Alert) error {
	svc, err := c.service()
	if err != nil {
		return channel.Permanent(errors.New(redact(err.Error(), c.url)))
	}
	rec := &recorder{ctx: ctx, base: c.client.Transport}
	if rec.base == nil {
		rec.base = http.DefaultTransport
	}
	client := *c.client
	client.Transport = rec
	s := services[c.scheme]
	if s.send != nil {
		err = s.send(svc, &client, message(a))
	} else {
		s.use(svc, &client)
		err = svc.Send(message(a), nil)
	}
	return rec.outcome(ctx, err, c.url)
}

// message is what the service sends: the summary and the panel link.
func message(a channel.Alert) string {
	m := channel.Fit(a.Summary(), maxSummary, nil)
	if a.PanelURL != "" {
		m += "\n" + a.PanelURL
	}
	return m
}

// recorder is the transport of one send: it makes every request of the
// service obey the send's context, sends it with Lookout's User-Agent
// through base (the guarded transport), bounds the answer and keeps the
// outcome of the last request.
type recorder struct {
	ctx  context.Context
	base http.RoundTripper

	mu       sync.Mutex
	requests int
	status   int   // of the last answer, 0 when it had none
	err      error // of the last request, nil when it was answered
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(r.ctx)
	req.Header.Set("User-Agent", channel.UserAgent)
	resp, err := r.base.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.status, r.err = 0, err
	if err != nil {
		return nil, err
	}
	r.status = resp.StatusCode
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, maxResponse), resp.Body}
	return resp, nil
}

// outcome classifies a send whose library call returned err.
func (r *recorder) outcome(ctx context.Context, err error, u *url.URL) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var refused *netguard.Error
	switch {
	case errors.As(r.err, &refused):
		return channel.Permanent(refused)
	case r.err == nil && r.status >= 200 && r.status < 300:
		// Delivered, whatever the library made of the answer's body.
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case r.err != nil:
		return fmt.Errorf("post: %w", unwrapURL(r.err))
	case r.status == http.StatusRequestTimeout, r.status == http.StatusTooManyRequests, r.status >= 500:
		return fmt.Errorf("receiver answered %d %s", r.status, http.StatusText(r.status))
	case r.status != 0:
		return channel.Permanent(fmt.Errorf("receiver answered %d %s", r.status, http.StatusText(r.status)))
	case err != nil:
		// Refused before any request: nothing a retry changes.
		return channel.Permanent(fmt.Errorf("not sent: %s", redact(err.Error(), u)))
	default:
		return channel.Permanent(errors.New("the service sent nothing"))
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
