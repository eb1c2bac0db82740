// Package httpprobe is the probe of an http_check: one request of the
// check's method, headers and body to its URL, redirects followed (at
// most MaxRedirects) unless follow_redirects is false, the whole attempt
// within the check's timeout, then the assertions: the status, the
// response time, the content that must be there or absent, and the
// json_path values, all within the first MaxContentSearch bytes of the
// body. It measures each phase with net/http/httptrace and names TLS
// errors.
package httpprobe

import (
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

	tm := newTimer(started)
	req, perr := p.request(tm.trace(attempt), t)
	if perr != nil {
		res.Err = perr
		return res
	}
	tlsConf, perr := p.opts.TLSConfig(t, clock)
	if perr != nil {
		res.Err = perr
		return res
	}

	h := &probe.HTTP{}
	res.HTTP = h
	client, closeIdle := p.client(tlsConf, !t.NoRedirects, &h.Redirects)
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

	head, err := readBody(resp.Body, readsBody(t), h)
	h.Timings = tm.timings(time.Now())
	if err != nil {
		res.Err = probe.Classify(ctx, err, timeout, clock())
		return res
	}
	res.Err = assert(t, resp.StatusCode, h.Timings.Total, head)
	return res
}

// request makes the request of t: its method, body, headers and basic
// auth, and the User-Agent unless a header sets one.
func (p *Prober) request(ctx context.Context, t probe.Target) (*http.Request, *probe.Error) {
	method := strings.ToUpper(t.Method)
	if method == "" {
		method = manifest.DefaultMethod
	}
	var body io.Reader
	if t.Body != "" {
		body = strings.NewReader(t.Body) // GetBody is set: a 307 or 308 sends it again
	}
	req, err := http.NewRequestWithContext(ctx, method, t.URL, body)
	if err != nil {
		return nil, &probe.Error{Kind: probe.KindInvalidTarget, Message: fmt.Sprintf("cannot request %q: %v", t.URL, err)}
	}
	req.Header.Set("User-Agent", p.opts.UserAgent())
	for _, hd := range t.Headers {
		if strings.EqualFold(hd.Name, "Host") {
			req.Host = hd.Value
			continue
		}
		req.Header.Set(hd.Name, hd.Value)
	}
	if a := t.BasicAuth; a != nil {
		req.SetBasicAuth(a.Username, a.Password)
	}
	return req, nil
}

// client returns an HTTP client for one attempt, which follows redirects
// when follow is true, counting them into *redirects, and the function
// that closes its connections.
func (p *Prober) client(tlsConf *tls.Config, follow bool, redirects *int) (*http.Client, func()) {
	tr := &http.Transport{
		DialContext:       p.opts.Dialer(),
		TLSClientConfig:   tlsConf,
		DisableKeepAlives: true,
		ForceAttemptHTTP2: true,
		// Proxy is nil: a check measures the way to the target itself.
	}
	c := &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !follow {
				return http.ErrUseLastResponse
			}
			if len(via) > MaxRedirects {
				return errTooManyRedirects
			}
			*redirects = len(via)
			dropSecrets(req, via[0])
			return nil
		},
	}
	return c, tr.CloseIdleConnections
}

// dropSecrets removes the secret headers (manifest.SecretHeader) from a
// redirect to another host than the check's: net/http itself drops only
// Authorization, Cookie and WWW-Authenticate, and a token in X-Api-Key is
// no less the check's own.
func dropSecrets(req, first *http.Request) {
	if strings.EqualFold(req.URL.Hostname(), first.URL.Hostname()) {
		return
	}
	for name := range req.Header {
		if manifest.SecretHeader(name) {
			req.Header.Del(name)
		}
	}
}

// readsBody reports whether an assertion of t looks into the body.
func readsBody(t probe.Target) bool {
	return t.ExpectedContent != "" || t.ContentAbsent != "" || len(t.JSONPath) > 0
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
