package probe

import "time"

// Result is the outcome of one attempt.
type Result struct {
	// Err is nil when the check passed.
	Err *Error
	// Duration is how long the attempt took.
	Duration time.Duration
	// HTTP is set by an http_check attempt that got as far as sending
	// the request (fields it did not reach are zero).
	HTTP *HTTP
	// SSL is set by an ssl_check attempt that completed a handshake,
	// even when the certificate is invalid.
	SSL *SSL
	// TCP is set by a tcp_check attempt that connected.
	TCP *TCP
	// DNS is set by a dns_check attempt that got an answer.
	DNS *DNS
}

// OK reports whether the check passed.
func (r Result) OK() bool { return r.Err == nil }

// Transient reports whether the attempt failed in a way worth retrying
// (a network error, a timeout, or a 5xx answer that is not the expected
// status).
func (r Result) Transient() bool { return r.Err != nil && r.Err.Transient }

// Kind names why an attempt failed. It is stable: the scheduler, the
// alerts and the API may show or match it.
type Kind string

// The kinds of failure.
const (
	// KindInvalidTarget: the config cannot be probed (a bad URL or domain).
	KindInvalidTarget Kind = "invalid_target"
	// KindTargetNotAllowed: the dialer refused the address (a loopback,
	// private, link-local ... address the control plane may not reach for
	// a tenant: internal/netguard).
	KindTargetNotAllowed Kind = "target_not_allowed"
	// KindCanceled: the caller gave up (its context ended) before the
	// attempt's own timeout; the result says nothing about the target.
	KindCanceled Kind = "canceled"
	// KindTimeout: no complete answer within the check's timeout.
	KindTimeout Kind = "timeout"
	// KindDNS: the host name could not be resolved.
	KindDNS Kind = "dns"
	// KindConnect: the TCP connection failed (refused, unreachable).
	KindConnect Kind = "connect"
	// KindNetwork: the connection failed after it was made (reset, EOF).
	KindNetwork Kind = "network"
	// KindTLSHandshake: the TLS handshake failed for a reason other than
	// the certificate (not a TLS server, no common version or cipher).
	KindTLSHandshake Kind = "tls_handshake"
	// KindCertExpired: a certificate of the chain has expired.
	KindCertExpired Kind = "certificate_expired"
	// KindCertNotYetValid: a certificate of the chain is not valid yet.
	KindCertNotYetValid Kind = "certificate_not_yet_valid"
	// KindCertSelfSigned: the server's certificate is self-signed and not
	// trusted.
	KindCertSelfSigned Kind = "certificate_self_signed"
	// KindCertUnknownAuthority: the chain does not lead to a trusted root.
	KindCertUnknownAuthority Kind = "certificate_unknown_authority"
	// KindCertHostname: the certificate is not valid for the host name.
	KindCertHostname Kind = "certificate_hostname_mismatch"
	// KindCertInvalid: the chain is invalid for another reason (key
	// usage, name constraints, a malformed certificate).
	KindCertInvalid Kind = "certificate_invalid"
	// KindCertExpiring: a valid certificate expires within alert_days.
	KindCertExpiring Kind = "certificate_expiring"
	// KindTooManyRedirects: more than httpprobe.MaxRedirects redirects.
	KindTooManyRedirects Kind = "too_many_redirects"
	// KindStatus: the final answer's status is not the expected one.
	KindStatus Kind = "unexpected_status"
	// KindContent: the expected content is not in the body's first MiB.
	KindContent Kind = "content_missing"
	// KindContentPresent: content that must be absent is in the body's
	// first MiB.
	KindContentPresent Kind = "content_present"
	// KindJSONPath: a json_path assertion does not hold (another value,
	// no value, or a body that is not JSON).
	KindJSONPath Kind = "json_path"
	// KindTooSlow: the answer came, but later than max_response_ms.
	KindTooSlow Kind = "too_slow"
	// KindExpect: a tcp_check's expected text did not come.
	KindExpect Kind = "expect_missing"
	// KindDNSNotFound: the name does not exist (NXDOMAIN).
	KindDNSNotFound Kind = "dns_not_found"
	// KindDNSServer: the DNS server answered with an error (SERVFAIL,
	// REFUSED, ...).
	KindDNSServer Kind = "dns_server_error"
	// KindDNSAnswer: no answer of the type, or an expected one missing.
	KindDNSAnswer Kind = "dns_answer"
)

// Error is why an attempt failed.
type Error struct {
	Kind Kind
	// Message says what happened in English, for a person: it is the
	// execution's error.
	Message string
	// Transient is true for a failure that a retry may not see.
	Transient bool
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// HTTP is what an http_check attempt saw.
type HTTP struct {
	// StatusCode is the status of the final answer (after redirects); 0
	// when no answer came.
	StatusCode int
	// ResponseBytes counts the body bytes read (after any
	// Content-Encoding is decoded), at most httpprobe.MaxBodyRead.
	ResponseBytes int64
	// BodyTruncated is true when the body was longer than httpprobe.MaxBodyRead
	// and the rest was not read.
	BodyTruncated bool
	// Redirects is how many redirects were followed.
	Redirects int
	// FinalURL is the URL of the final answer.
	FinalURL string
	// Timings are the phases of the attempt.
	Timings Timings
}

// Timings are the phases of an HTTP attempt. DNS, Connect and TLS add up
// the phase over every request of a redirect chain (DNS is zero for an IP
// address); TTFB runs from the start of the attempt to the first byte of
// the final answer; Total is the whole attempt, body included.
type Timings struct {
	DNS     time.Duration
	Connect time.Duration
	TLS     time.Duration
	TTFB    time.Duration
	Total   time.Duration
}

// TCP is what a tcp_check attempt saw.
type TCP struct {
	// Connect runs from the start of the attempt until the connection
	// was made (the host name's lookup included).
	Connect time.Duration
	// Read counts the bytes read while waiting for Expect.
	Read int
}

// DNS is what a dns_check attempt saw.
type DNS struct {
	// Answers are the records of the asked type in the answer, as text
	// (an address, a name without the final dot, "preference host" for
	// MX, a TXT record's strings joined), at most dnsprobe.MaxAnswers.
	Answers []string
	// RTT is the time of the exchange that answered.
	RTT time.Duration
}

// Level grades a certificate for the ssl alerts.
type Level string

// The levels of an ssl_check result.
const (
	// LevelOK: valid, and days_left above warning_days.
	LevelOK Level = "ok"
	// LevelWarning: valid, days_left at or below warning_days (still a
	// success).
	LevelWarning Level = "warning"
	// LevelAlert: invalid, or days_left at or below alert_days (a
	// failure).
	LevelAlert Level = "alert"
)

// SSL is what an ssl_check attempt saw of the server's certificate.
type SSL struct {
	// ExpiresAt is the earliest NotAfter of the leaf and intermediates
	// of the verified chain (not of its root, nor of certificates the
	// server sent that the chain does not use). When the chain does not
	// verify: the leaf's, or that of the expired certificate that broke
	// the chain.
	ExpiresAt time.Time
	// DaysLeft is the whole days from the check to ExpiresAt, rounded
	// down (negative once expired).
	DaysLeft int
	// Issuer and Subject are the leaf's, in RFC 2253 form.
	Issuer  string
	Subject string
	// DNSNames are the leaf's subject alternative names.
	DNSNames []string
	// ChainValid: the chain verifies against the trusted roots at the
	// time of the check.
	ChainValid bool
	// HostnameValid: the leaf is valid for the checked host name.
	HostnameValid bool
	// Level grades the result against warning_days and alert_days.
	Level Level
}
