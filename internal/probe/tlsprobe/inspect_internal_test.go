package tlsprobe

import (
	"crypto/x509"
	"testing"
	"time"

	"lookout/internal/probe"
	"lookout/internal/probe/probetest"
)

// TestBrokenChainFindsExpiredIssuer: when Go reports an expired
// intermediate as an unknown authority (it does when another candidate
// issuer was tried after it), the expired certificate on the path the
// server sent is still named.
func TestBrokenChainFindsExpiredIssuer(t *testing.T) {
	root := probetest.NewRoot(t, "Test Root", probetest.For(3650*probetest.Day))
	other := probetest.NewRoot(t, "Other Root", probetest.For(3650*probetest.Day))
	gone := root.Intermediate(t, "Expired Intermediate", probetest.Expired(probetest.Day))
	leaf := gone.Leaf(t, probetest.For(300*probetest.Day), "a.test")
	unrelated := other.Intermediate(t, "Unrelated", probetest.Expired(probetest.Day))
	sent := []*x509.Certificate{leaf.Cert, unrelated.Cert, gone.Cert}

	exp, err := brokenChain(leaf.Cert, sent, time.Now(), x509.UnknownAuthorityError{Cert: leaf.Cert})
	if err.Kind != probe.KindCertExpired || !exp.Equal(gone.Cert.NotAfter) {
		t.Fatalf("%v, expiry %v; want the expired intermediate's %v", err, exp, gone.Cert.NotAfter)
	}

	// Without an expired certificate on the path, the unknown authority
	// stands and the leaf's expiry is reported.
	exp, err = brokenChain(leaf.Cert, sent[:2], time.Now(), x509.UnknownAuthorityError{Cert: leaf.Cert})
	if err.Kind != probe.KindCertUnknownAuthority || !exp.Equal(leaf.Cert.NotAfter) {
		t.Fatalf("%v, expiry %v; want unknown authority and the leaf's expiry", err, exp)
	}
}
