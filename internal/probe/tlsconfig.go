package probe

import (
	"crypto/tls"
	"crypto/x509"
	"strconv"
	"strings"
	"time"
)

// TrustedRoots returns the pool a check's server certificates are verified
// against: o.Roots (nil: the system pool) with the certificates of t.CA
// added. It is o.Roots itself when t has no CA.
func (o Options) TrustedRoots(t Target) (*x509.CertPool, *Error) {
	if t.CA == "" {
		return o.Roots, nil
	}
	var pool *x509.CertPool
	if o.Roots != nil {
		pool = o.Roots.Clone()
	} else if sys, err := x509.SystemCertPool(); err == nil {
		pool = sys
	} else {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM([]byte(t.CA)) {
		return nil, &Error{Kind: KindInvalidTarget, Message: "the ca holds no PEM certificate"}
	}
	return pool, nil
}

// TLSConfig returns the client TLS configuration of an https request of
// t: its roots (with t.CA), its client certificate, and no verification
// with TLSSkipVerify. now is the time certificates are checked at.
func (o Options) TLSConfig(t Target, now func() time.Time) (*tls.Config, *Error) {
	roots, perr := o.TrustedRoots(t)
	if perr != nil {
		return nil, perr
	}
	c := &tls.Config{RootCAs: roots, Time: now, InsecureSkipVerify: t.TLSSkipVerify}
	if t.ClientCert != "" || t.ClientKey != "" {
		pair, err := tls.X509KeyPair([]byte(t.ClientCert), []byte(t.ClientKey))
		if err != nil {
			// The error never quotes the key.
			return nil, &Error{Kind: KindInvalidTarget, Message: "the client_cert and client_key are not a certificate and its key: " + strings.TrimPrefix(err.Error(), "tls: ")}
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// Millis writes d in whole milliseconds with thousands separators, as
// the execution's messages do: "1,840 ms".
func Millis(d time.Duration) string {
	return Count(d.Milliseconds()) + " ms"
}

// Count writes n with thousands separators: 1048576 -> "1,048,576".
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
