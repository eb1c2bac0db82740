// Package probe is the one interface every check kind implements (an HTTP
// request, a TLS handshake, a TCP connection, a DNS question), and the
// Result an attempt produces: what a check's execution records, and
// whether a failure is transient (worth a retry).
//
// A probe makes one attempt; retries, schedules and executions belong to
// whoever runs it (the control plane's leader, or an edge agent). Each kind
// is a subpackage (httpprobe, tlsprobe, tcpprobe, dnsprobe) that imports
// neither control/, cluster/, raft nor Badger, so the agent can import it.
package probe

import (
	"context"
	"crypto/x509"
	"net"
	"time"

	"lookout/internal/manifest"
)

// Prober makes one attempt of a check. It never returns without a Result:
// every failure is in Result.Err. It returns within the target's timeout
// (or sooner when ctx ends).
type Prober interface {
	Probe(ctx context.Context, t Target) Result
}

// Target is what to check: the stored config of the monitor
// (CheckConfig in proto/lookout/raft/v1), field for field. An http_check
// uses URL to MaxResponse and the TLS fields; an ssl_check Domain, Port,
// WarningDays, AlertDays, CA and Timeout; a tcp_check Host, Port, Send,
// Expect and Timeout; a dns_check Name, RecordType, Server, Expected and
// Timeout.
type Target struct {
	// URL is the absolute http or https URL of an http_check.
	URL string
	// Method is the HTTP method; "" means GET.
	Method string
	// Timeout bounds the whole attempt; 0 means manifest.DefaultCheckTimeout seconds.
	Timeout time.Duration
	// ExpectedStatus is the status the final answer must have; 0 means
	// unset: then ExpectedStatuses, or else any 2xx or 3xx passes.
	ExpectedStatus int
	// ExpectedStatuses are statuses ("204") and classes ("2xx"), one of
	// which the final answer must match; used when ExpectedStatus is 0.
	ExpectedStatuses []string
	// ExpectedContent must occur in the first MiB (httpprobe.MaxContentSearch) of
	// the body; "" means unset.
	ExpectedContent string
	// ContentAbsent must not occur there; "" means unset.
	ContentAbsent string
	// Headers are sent with the request (Host sets the request's host).
	Headers []Header
	// Body is sent with the method; "" sends none.
	Body string
	// BasicAuth, when set, is sent as an Authorization header.
	BasicAuth *BasicAuth
	// NoRedirects makes the first answer the final one (follow_redirects
	// false).
	NoRedirects bool
	// JSONPath are assertions on the body read as JSON (within its first
	// MiB).
	JSONPath []JSONAssertion
	// MaxResponse fails an answer that took longer, body included; 0
	// means no limit.
	MaxResponse time.Duration
	// CA is PEM of certificates trusted for this check besides the roots
	// (Options.Roots or the system's).
	CA string
	// TLSSkipVerify accepts any certificate of an https URL.
	TLSSkipVerify bool
	// ClientCert and ClientKey (PEM) are presented to a server that asks
	// for a client certificate.
	ClientCert, ClientKey string

	// Domain is the host name of an ssl_check, optionally with :port
	// (443 when absent and Port is 0).
	Domain string
	// Port is the port of an ssl_check (instead of one in Domain) or of a
	// tcp_check.
	Port int
	// WarningDays and AlertDays are the ssl_check thresholds on days_left;
	// 0 means the default (30, and min(7, WarningDays)).
	WarningDays int
	AlertDays   int

	// Host is the host name or IP address of a tcp_check.
	Host string
	// Send is written once connected; Expect must then be read within
	// the first tcpprobe.MaxRead bytes. "" means unset.
	Send, Expect string

	// Name is the name a dns_check looks up, RecordType the type (A,
	// AAAA, CNAME, MX or TXT).
	Name, RecordType string
	// Server is the DNS server asked (host[:port], port 53 when absent);
	// "" asks the system resolver.
	Server string
	// Expected must each be among the answers; with none, at least one
	// answer is needed.
	Expected []string
}

// Header is one request header of an http_check.
type Header struct {
	Name, Value string
}

// BasicAuth is the user name and password of an http_check.
type BasicAuth struct {
	Username, Password string
}

// JSONAssertion says that the value at Path (internal/jsonpath) equals
// the JSON scalar Equals.
type JSONAssertion struct {
	Path   string
	Equals string
}

// Thresholds returns the effective warning and alert days of an
// ssl_check, with the defaults of a zero value applied.
func (t Target) Thresholds() (warning, alert int) {
	warning, alert = t.WarningDays, t.AlertDays
	if warning == 0 {
		warning = manifest.DefaultWarningDays
	}
	if alert == 0 {
		alert = min(manifest.DefaultAlertDays, warning)
	}
	return warning, alert
}

// EffectiveTimeout returns the timeout of an attempt,
// manifest.DefaultCheckTimeout seconds when unset.
func (t Target) EffectiveTimeout() time.Duration {
	if t.Timeout <= 0 {
		return manifest.DefaultCheckTimeout * time.Second
	}
	return t.Timeout
}

// Options configures a prober. The zero value is ready for production:
// system roots, a plain dialer, the real clock.
type Options struct {
	// Version goes into the User-Agent header, Lookout/<Version>; "dev"
	// when empty.
	Version string
	// Roots verifies server certificates; nil means the system pool
	// (which honours SSL_CERT_FILE and SSL_CERT_DIR).
	Roots *x509.CertPool
	// DialContext opens TCP connections; nil means a net.Dialer. Tests
	// use it to reach a host name on 127.0.0.1.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Now is the time certificates are checked at and days_left counted
	// from; nil means time.Now.
	Now func() time.Time
}

// UserAgent returns the User-Agent header value, Lookout/<version>.
func (o Options) UserAgent() string {
	if o.Version == "" {
		return "Lookout/dev"
	}
	return "Lookout/" + o.Version
}

// Clock returns o.Now, or time.Now when it is nil.
func (o Options) Clock() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}

// Dialer returns o.DialContext, or a net.Dialer's when it is nil.
func (o Options) Dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if o.DialContext == nil {
		return (&net.Dialer{}).DialContext
	}
	return o.DialContext
}
