package tlsprobe

import (
	"crypto/x509"
	"errors"
	"math"
	"time"

	"lookout/internal/probe"
)

// Inspect verifies the certificates a server sent for host (the leaf
// first) against roots (nil: the system pool) at now, and describes the
// leaf. The chain and the host name are checked separately: the returned
// SSL says which holds, and the error (nil when both do) names the
// chain's problem first. SSL is nil only when certs is empty.
//
// ExpiresAt is the earliest NotAfter of the leaf and the intermediates of
// the verified chain, not counting its root: a certificate the server
// sends but the chain does not use (an expiring cross-signed root) does
// not count. Of several verified chains, the one that lasts longest
// counts, as a client finds it.
func Inspect(certs []*x509.Certificate, host string, roots *x509.CertPool, now time.Time) (*probe.SSL, *probe.Error) {
	if len(certs) == 0 {
		return nil, &probe.Error{Kind: probe.KindCertInvalid, Message: "the server sent no certificate"}
	}
	leaf := certs[0]
	ssl := &probe.SSL{
		Issuer:   leaf.Issuer.String(),
		Subject:  leaf.Subject.String(),
		DNSNames: leaf.DNSNames,
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), CurrentTime: now}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	chains, err := leaf.Verify(opts)
	var verr *probe.Error
	if err == nil {
		ssl.ChainValid = true
		ssl.ExpiresAt = longestLived(chains)
	} else {
		ssl.ExpiresAt, verr = brokenChain(leaf, certs, now, err)
	}
	if herr := leaf.VerifyHostname(host); herr == nil {
		ssl.HostnameValid = true
	} else if hostErr := probe.CertError(herr, now); verr == nil {
		verr = hostErr
	} else {
		verr.Message += "; and " + hostErr.Message
	}
	ssl.DaysLeft = daysLeft(ssl.ExpiresAt, now)
	return ssl, verr
}

// longestLived returns the latest of the chains' expiry: the earliest
// NotAfter of a chain's leaf and intermediates (its root is the trust
// anchor, not a certificate the server's chain depends on).
func longestLived(chains [][]*x509.Certificate) time.Time {
	var best time.Time
	for _, chain := range chains {
		exp := expiry(chain[:max(1, len(chain)-1)])
		if exp.After(best) {
			best = exp
		}
	}
	return best
}

// expiry returns the earliest NotAfter of certs.
func expiry(certs []*x509.Certificate) time.Time {
	exp := certs[0].NotAfter
	for _, c := range certs[1:] {
		if c.NotAfter.Before(exp) {
			exp = c.NotAfter
		}
	}
	return exp
}

// brokenChain names why the chain did not verify, and which expiry to
// report: that of an expired certificate on the path the server sent, or
// else the leaf's. (Go reports an expired intermediate as an unknown
// authority, having skipped it as a candidate issuer; following the
// signatures from the leaf through the certificates sent finds it.)
func brokenChain(leaf *x509.Certificate, certs []*x509.Certificate, now time.Time, err error) (time.Time, *probe.Error) {
	var inv x509.CertificateInvalidError
	if errors.As(err, &inv) && inv.Reason == x509.Expired && inv.Cert != nil && now.After(inv.Cert.NotAfter) {
		return inv.Cert.NotAfter, probe.Expired(inv.Cert)
	}
	var ua x509.UnknownAuthorityError
	if errors.As(err, &ua) {
		if c := expiredIssuer(leaf, certs[1:], now); c != nil {
			return c.NotAfter, probe.Expired(c)
		}
	}
	verr := probe.CertError(err, now)
	if verr == nil {
		verr = &probe.Error{Kind: probe.KindCertInvalid, Message: "invalid certificate: " + err.Error()}
	}
	return leaf.NotAfter, verr
}

// expiredIssuer follows the signatures from leaf through sent (each
// certificate used once) and returns the first certificate on that path
// that has expired at now, or nil.
func expiredIssuer(leaf *x509.Certificate, sent []*x509.Certificate, now time.Time) *x509.Certificate {
	used := make([]bool, len(sent))
	for cur := leaf; ; {
		next := -1
		for i, c := range sent {
			if !used[i] && cur.CheckSignatureFrom(c) == nil {
				next = i
				break
			}
		}
		if next < 0 {
			return nil
		}
		used[next] = true
		if cur = sent[next]; now.After(cur.NotAfter) {
			return cur
		}
	}
}

// daysLeft returns the whole days from now to exp, rounded down.
func daysLeft(exp, now time.Time) int {
	return int(math.Floor(exp.Sub(now).Hours() / 24))
}
