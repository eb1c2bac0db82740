// Package tlsprobe is the probe of an ssl_check: a TLS handshake with the
// check's domain (port 443 unless given), then the server's certificate
// inspected and verified against the trusted roots (with the check's own
// ca, if any) and the host name, each reported separately, and days_left
// counted on the verified chain.
package tlsprobe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"lookout/internal/probe"
)

// DefaultPort is the port of a domain without one.
const DefaultPort = "443"

// Prober probes ssl_checks. It is safe for concurrent use.
type Prober struct {
	opts probe.Options
}

var _ probe.Prober = (*Prober)(nil)

// New returns a Prober with the given options.
func New(opts probe.Options) *Prober {
	return &Prober{opts: opts}
}

// Probe makes one attempt of the ssl_check t: the handshake and the
// inspection within t's timeout. A certificate that fails verification is
// still inspected: Result.SSL is set whenever the handshake completed.
func (p *Prober) Probe(ctx context.Context, t probe.Target) (res probe.Result) {
	started := time.Now()
	defer func() { res.Duration = time.Since(started) }()
	timeout := t.EffectiveTimeout()
	attempt, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	host, port, err := splitDomain(t.Domain, t.Port)
	if err != nil {
		res.Err = &probe.Error{Kind: probe.KindInvalidTarget, Message: err.Error()}
		return res
	}
	roots, perr := p.opts.TrustedRoots(t)
	if perr != nil {
		res.Err = perr
		return res
	}
	raw, err := p.opts.Dialer()(attempt, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		res.Err = probe.Classify(ctx, err, timeout, p.opts.Clock()())
		return res
	}
	// Verification is done below, by Inspect, so that an invalid
	// certificate is still reported in full.
	conn := tls.Client(raw, &tls.Config{ServerName: host, InsecureSkipVerify: true})
	defer func() { _ = conn.Close() }()
	if err := conn.HandshakeContext(attempt); err != nil {
		res.Err = probe.Classify(ctx, err, timeout, p.opts.Clock()())
		return res
	}
	now := p.opts.Clock()()
	ssl, verr := Inspect(conn.ConnectionState().PeerCertificates, host, roots, now)
	res.SSL = ssl
	res.Err = verr
	if ssl != nil {
		res.Err = grade(ssl, verr, t)
	}
	return res
}

// grade sets ssl.Level from the verification error verr and the
// thresholds of t, and returns the attempt's error: verr, or an
// expiring-certificate error when days_left is at or below alert_days.
func grade(ssl *probe.SSL, verr *probe.Error, t probe.Target) *probe.Error {
	warning, alert := t.Thresholds()
	switch {
	case verr != nil:
		ssl.Level = probe.LevelAlert
		return verr
	case ssl.DaysLeft <= alert:
		ssl.Level = probe.LevelAlert
		return &probe.Error{Kind: probe.KindCertExpiring,
			Message: fmt.Sprintf("the certificate expires in %d days, at %s (alert_days is %d)",
				ssl.DaysLeft, ssl.ExpiresAt.UTC().Format(time.RFC3339), alert)}
	case ssl.DaysLeft <= warning:
		ssl.Level = probe.LevelWarning
	default:
		ssl.Level = probe.LevelOK
	}
	return nil
}

// splitDomain splits host[:port], with the config's port, or else
// DefaultPort, when the domain has none.
func splitDomain(domain string, configPort int) (host, port string, err error) {
	if domain == "" {
		return "", "", fmt.Errorf("no domain to check")
	}
	host, port, err = net.SplitHostPort(domain)
	if err != nil {
		// No port (or not a host:port at all: the dial says so).
		if configPort > 0 {
			return domain, strconv.Itoa(configPort), nil
		}
		return domain, DefaultPort, nil
	}
	if host == "" || port == "" {
		return "", "", fmt.Errorf("the domain %q has an empty host or port", domain)
	}
	return host, port, nil
}
