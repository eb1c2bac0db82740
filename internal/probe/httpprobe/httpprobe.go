// Package httpprobe is the probe of an http_check: one request of the check's method to its URL, redirects followed (at
// most MaxRedirects), the whole attempt within the check's timeout, then
// the status and content assertions. It measures each phase with
// net/http/httptrace and names TLS errors.
package httpprobe

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"lookout/internal/manifest"
	"lookout/internal/probe"
)

// Limits of an attempt.
const (
	// MaxRedirects is how many redirects an attempt follows; one more
	// fails it.
	MaxRedirects = 10
	// MaxContentSearch is how much of the body the expected content is
	// searched in.
	MaxContentSearch = 1 << 20
	// MaxBodyRead is how much of the body is read at all (to count its
	// size and time its download); the rest is not read.
	MaxBodyRead = 10 << 20
)

// errTooManyRedirects stops the client at the redirect past MaxRedirects.
var errTooManyRedirects = errors.New("too many redirects")

// Prober probes http_checks. It is safe for concurrent use; it keeps no
// connection between attempts, so each attempt measures DNS, connect and
// TLS afresh.
type Prober struct {
	opts probe.Options
}

var _ probe.Prober = (*Prober)(nil)

// New returns a Prober with the given options.
func New(opts probe.Options) *Prober {
	return &Prober{opts: opts}
}

// Probe makes one attempt of the http_check t.
func (p *Prober) Probe(ctx context.Context, t probe.Target) (res probe.Result) {
	clock := p.opts.Clock()
	started := time.Now()
	defer func() { res.Duration = time.Since(started) }()
	timeout := t.EffectiveTimeout()
	attempt, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	method := strings.ToUpper(t.Method)
	if method == "" {
		method = manifest.DefaultMethod
	}
	tm := newTimer(started)
	req, err := http.NewRequestWithContext(tm.trace(attempt), method, t.URL, nil)
	if err != nil {
		res.Err = &probe.Error{Kind: probe.KindInvalidTarget, Message: fmt.Sprintf("cannot request %q: %v", t.URL, err)}
		return res
	}
	req.Header.Set("User-Agent", p.opts.UserAgent())

	h := &probe.HTTP{}
	res.HTTP = h
	client, closeIdle := p.client(clock, &h.Redirects)
	defer closeIdle()
	resp, err := client.Do(req)
	if err != nil {
		h.Timings = tm.timings(time.Now())
		if errors.Is(err, errTooManyRedirects) {
			res.Err = &probe.Error{Kind: probe.KindTooManyRedirects,
				Message: fmt.Sprintf("more than %d redirects", MaxRedirects)}
			return res
		}
		res.Err = probe.Classify(ctx, err, timeout, clock())
		return res
	}
	defer func() { _ = resp.Body.Close() }()
	h.StatusCode = resp.StatusCode
	h.FinalURL = resp.Request.URL.String()

	head, err := readBody(resp.Body, t.ExpectedContent != "", h)
	h.Timings = tm.timings(time.Now())
	if err != nil {
		res.Err = probe.Classify(ctx, err, timeout, clock())
		return res
	}
	res.Err = assert(t, resp.StatusCode, head)
	return res
}

// client returns an HTTP client for one attempt, which counts the
// redirects it follows into *redirects, and the function that closes its
// connections.
func (p *Prober) client(now func() time.Time, redirects *int) (*http.Client, func()) {
	tr := &http.Transport{
		DialContext:       p.opts.Dialer(),
		TLSClientConfig:   &tls.Config{RootCAs: p.opts.Roots, Time: now},
		DisableKeepAlives: true,
		ForceAttemptHTTP2: true,
		// Proxy is nil: a check measures the way to the target itself.
	}
	c := &http.Client{
		Transport: tr,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return errTooManyRedirects
			}
			*redirects = len(via)
			return nil
		},
	}
	return c, tr.CloseIdleConnections
}

// readBody reads the body up to MaxBodyRead, counting it into h, and
// returns its first MaxContentSearch bytes when keep is true.
func readBody(body io.Reader, keep bool, h *probe.HTTP) ([]byte, error) {
	var head []byte
	var err error
	if keep {
		head, err = io.ReadAll(io.LimitReader(body, MaxContentSearch))
		h.ResponseBytes = int64(len(head))
		if err != nil {
			return nil, err
		}
	}
	n, err := io.Copy(io.Discard, io.LimitReader(body, MaxBodyRead-h.ResponseBytes))
	h.ResponseBytes += n
	if err != nil {
		return nil, err
	}
	if h.ResponseBytes == MaxBodyRead {
		// Whether more follows: one byte tells.
		var b [1]byte
		if m, _ := body.Read(b[:]); m > 0 {
			h.BodyTruncated = true
		}
	}
	return head, nil
}

// assert checks the final answer: its status against the expected one
// (any 2xx or 3xx when unset), then the expected content in head.
func assert(t probe.Target, status int, head []byte) *probe.Error {
	if t.ExpectedStatus != 0 && status != t.ExpectedStatus {
		return &probe.Error{Kind: probe.KindStatus, Transient: status >= 500 && status <= 599,
			Message: fmt.Sprintf("the status is %d, expected %d", status, t.ExpectedStatus)}
	}
	if t.ExpectedStatus == 0 && (status < 200 || status > 399) {
		return &probe.Error{Kind: probe.KindStatus, Transient: status >= 500 && status <= 599,
			Message: fmt.Sprintf("the status is %d, expected 2xx or 3xx", status)}
	}
	if t.ExpectedContent != "" && !bytes.Contains(head, []byte(t.ExpectedContent)) {
		return &probe.Error{Kind: probe.KindContent,
			Message: fmt.Sprintf("the expected content is not in the first %d bytes of the body", MaxContentSearch)}
	}
	return nil
}
