package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	"lookout/internal/netguard"
)

// Classify turns the error of a dial, a TLS handshake or an HTTP exchange
// into an Error: an address the dialer refused (netguard, not
// transient), a certificate problem (named, not transient), the caller
// giving up (parent ended), a timeout, a DNS, connection or other network
// failure (transient), or a TLS handshake failure. timeout is the
// attempt's, for the message; now is the time certificates were checked
// at.
func Classify(parent context.Context, err error, timeout time.Duration, now time.Time) *Error {
	if parent.Err() != nil {
		return &Error{Kind: KindCanceled, Message: "the attempt was abandoned: " + parent.Err().Error()}
	}
	var refused *netguard.Error
	if errors.As(err, &refused) {
		// The same answer on every retry: not worth one.
		return &Error{Kind: KindTargetNotAllowed, Message: refused.Error()}
	}
	if e := CertError(err, now); e != nil {
		return e
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Message: fmt.Sprintf("no complete answer within %s", timeout), Transient: true}
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return &Error{Kind: KindDNS, Message: fmt.Sprintf("cannot resolve %s: %s", dnsErr.Name, dnsErr.Err), Transient: true}
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		why := op.Err.Error()
		var errno syscall.Errno
		if errors.As(op.Err, &errno) {
			why = errno.Error()
		}
		return &Error{Kind: KindConnect, Message: fmt.Sprintf("cannot connect to %s: %s", op.Addr, why), Transient: true}
	}
	if e := handshakeError(err); e != nil {
		return e
	}
	return &Error{Kind: KindNetwork, Message: "network error: " + inner(err).Error(), Transient: true}
}

// handshakeError names a TLS handshake failure that is not about the
// certificate, or returns nil.
func handshakeError(err error) *Error {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return &Error{Kind: KindTLSHandshake, Message: "TLS handshake failed: the server did not answer with TLS"}
	}
	var alert tls.AlertError
	var op *net.OpError
	if errors.As(err, &alert) || errors.As(err, &op) && op.Op == "remote error" {
		return &Error{Kind: KindTLSHandshake, Message: "TLS handshake failed: the server refused it: " + inner(err).Error()}
	}
	// The crypto/tls package's other handshake errors are plain errors.New,
	// and so is net/http's when the first answer is not a TLS record.
	msg := inner(err).Error()
	if strings.HasPrefix(msg, "tls: ") {
		return &Error{Kind: KindTLSHandshake, Message: "TLS handshake failed: " + msg}
	}
	if msg == "http: server gave HTTP response to HTTPS client" {
		return &Error{Kind: KindTLSHandshake, Message: "TLS handshake failed: the server did not answer with TLS"}
	}
	return nil
}

// CertError names a certificate verification failure (expired, not yet
// valid, self-signed, unknown authority, host name mismatch, other), or
// returns nil when err is not one. Such a failure is never transient.
func CertError(err error, now time.Time) *Error {
	var host x509.HostnameError
	var inv x509.CertificateInvalidError
	var ua x509.UnknownAuthorityError
	var ver *tls.CertificateVerificationError
	switch {
	case errors.As(err, &host):
		return &Error{Kind: KindCertHostname, Message: "the " + strings.TrimPrefix(host.Error(), "x509: ")}
	case errors.As(err, &inv) && inv.Reason == x509.Expired && inv.Cert != nil:
		if now.Before(inv.Cert.NotBefore) {
			return &Error{Kind: KindCertNotYetValid, Message: fmt.Sprintf("the certificate %s is not valid before %s",
				CertName(inv.Cert), inv.Cert.NotBefore.UTC().Format(time.RFC3339))}
		}
		return Expired(inv.Cert)
	case errors.As(err, &ua):
		if ua.Cert != nil && selfSigned(ua.Cert) {
			return &Error{Kind: KindCertSelfSigned, Message: fmt.Sprintf("the certificate %s is self-signed and not trusted", CertName(ua.Cert))}
		}
		msg := strings.TrimPrefix(ua.Error(), "x509: ")
		if ua.Cert != nil {
			msg = fmt.Sprintf("the certificate %s is %s (issuer %s)", CertName(ua.Cert), strings.TrimPrefix(msg, "certificate "), ua.Cert.Issuer)
		}
		return &Error{Kind: KindCertUnknownAuthority, Message: msg}
	case errors.As(err, &inv), errors.As(err, &ver):
		return &Error{Kind: KindCertInvalid, Message: "invalid certificate: " + strings.TrimPrefix(inner(err).Error(), "x509: ")}
	}
	var uce x509.UnhandledCriticalExtension
	var cve x509.ConstraintViolationError
	if errors.As(err, &uce) || errors.As(err, &cve) {
		return &Error{Kind: KindCertInvalid, Message: "invalid certificate: " + strings.TrimPrefix(inner(err).Error(), "x509: ")}
	}
	return nil
}

// Expired is the error of an expired certificate c.
func Expired(c *x509.Certificate) *Error {
	return &Error{Kind: KindCertExpired, Message: fmt.Sprintf("the certificate %s expired at %s",
		CertName(c), c.NotAfter.UTC().Format(time.RFC3339))}
}

// CertName names a certificate in a message: its common name, or its
// whole subject when it has none.
func CertName(c *x509.Certificate) string {
	if c.Subject.CommonName != "" {
		return fmt.Sprintf("%q", c.Subject.CommonName)
	}
	return fmt.Sprintf("%q", c.Subject.String())
}

// selfSigned reports whether c is signed by its own key.
func selfSigned(c *x509.Certificate) bool {
	return string(c.RawIssuer) == string(c.RawSubject) &&
		c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}

// inner drops the url.Error wrapping of an HTTP client error, whose
// message repeats the method and URL.
func inner(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
