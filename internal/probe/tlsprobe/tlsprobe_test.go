package tlsprobe_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"slices"
	"testing"
	"time"

	"lookout/internal/probe"
	"lookout/internal/probe/probetest"
	"lookout/internal/probe/tlsprobe"
)

const day = probetest.Day

// check serves chain on 127.0.0.1 and probes it as the ssl_check t with
// domain host (and the server's port), trusting roots.
func check(tb testing.TB, chain tls.Certificate, host string, roots *x509.CertPool, t probe.Target) probe.Result {
	tb.Helper()
	srv := probetest.TLSServer(tb, chain, nil)
	t.Domain = host + ":" + probetest.Port(srv)
	p := tlsprobe.New(probe.Options{Roots: roots, DialContext: probetest.Loopback})
	return p.Probe(context.Background(), t)
}

// want fails unless r has the kind of error (or none), days_left, level
// and validity flags given.
func want(t *testing.T, r probe.Result, kind probe.Kind, days int, level probe.Level, chain, host bool) {
	t.Helper()
	if r.SSL == nil {
		t.Fatalf("no SSL details; err %v", r.Err)
	}
	s := r.SSL
	switch {
	case kind == "" && r.Err != nil:
		t.Fatalf("err %v, want success", r.Err)
	case kind != "" && (r.Err == nil || r.Err.Kind != kind || r.Err.Transient):
		t.Fatalf("err %+v, want kind %s, not transient", r.Err, kind)
	}
	if s.DaysLeft != days || s.Level != level || s.ChainValid != chain || s.HostnameValid != host {
		t.Fatalf("SSL %+v, want days_left %d, level %s, chain %v, host %v", *s, days, level, chain, host)
	}
	if r.Err != nil {
		t.Log(r.Err.Message)
	}
}

func TestExpiryThresholds(t *testing.T) {
	root := probetest.NewRoot(t, "Test Root", probetest.For(3650*day))
	pool := probetest.Pool(root)
	for _, tc := range []struct {
		days, warning, alert int
		kind                 probe.Kind
		level                probe.Level
	}{
		{days: 5, kind: probe.KindCertExpiring, level: probe.LevelAlert},
		{days: 7, kind: probe.KindCertExpiring, level: probe.LevelAlert},
		{days: 20, level: probe.LevelWarning},
		{days: 30, level: probe.LevelWarning},
		{days: 60, level: probe.LevelOK},
		{days: 5, warning: 10, alert: 3, level: probe.LevelWarning},
		{days: 20, warning: 60, alert: 30, kind: probe.KindCertExpiring, level: probe.LevelAlert},
	} {
		leaf := root.Leaf(t, probetest.For(time.Duration(tc.days)*day), "a.test", "www.a.test")
		r := check(t, probetest.Chain(leaf), "a.test", pool, probe.Target{WarningDays: tc.warning, AlertDays: tc.alert})
		want(t, r, tc.kind, tc.days, tc.level, true, true)
		s := r.SSL
		if !s.ExpiresAt.Equal(leaf.Cert.NotAfter) || s.Issuer != "CN=Test Root,O=Lookout test" ||
			s.Subject != "CN=a.test" || !slices.Equal(s.DNSNames, []string{"a.test", "www.a.test"}) {
			t.Fatalf("SSL %+v", *s)
		}
	}
}

func TestInvalidCertificatesAreStillInspected(t *testing.T) {
	root := probetest.NewRoot(t, "Test Root", probetest.For(3650*day))
	pool := probetest.Pool(root)
	year := probetest.For(365 * day)

	// Wrong host: the chain is fine, the name is not.
	r := check(t, probetest.Chain(root.Leaf(t, year, "a.test")), "b.test", pool, probe.Target{})
	want(t, r, probe.KindCertHostname, 365, probe.LevelAlert, true, false)

	// Self-signed: not trusted, but its dates and names are reported.
	r = check(t, probetest.Chain(probetest.SelfSigned(t, probetest.For(60*day), "a.test")), "a.test", pool, probe.Target{})
	want(t, r, probe.KindCertSelfSigned, 60, probe.LevelAlert, false, true)

	// Both wrong: the chain's problem first, the host's too.
	r = check(t, probetest.Chain(probetest.SelfSigned(t, year, "a.test")), "b.test", pool, probe.Target{})
	want(t, r, probe.KindCertSelfSigned, 365, probe.LevelAlert, false, false)

	// Signed by a root that is not trusted.
	other := probetest.NewRoot(t, "Other Root", probetest.For(3650*day))
	r = check(t, probetest.Chain(other.Leaf(t, year, "a.test")), "a.test", pool, probe.Target{})
	want(t, r, probe.KindCertUnknownAuthority, 365, probe.LevelAlert, false, true)

	// Expired: days_left is negative.
	leaf := root.Leaf(t, probetest.Expired(2*day+time.Hour), "a.test")
	r = check(t, probetest.Chain(leaf), "a.test", pool, probe.Target{})
	want(t, r, probe.KindCertExpired, -3, probe.LevelAlert, false, true)

	// Not valid yet.
	now := time.Now()
	leaf = root.Leaf(t, probetest.Validity{NotBefore: now.Add(day), NotAfter: now.Add(90*day + time.Hour)}, "a.test")
	r = check(t, probetest.Chain(leaf), "a.test", pool, probe.Target{})
	want(t, r, probe.KindCertNotYetValid, 90, probe.LevelAlert, false, true)
}

func TestDaysLeftFollowsTheVerifiedChain(t *testing.T) {
	root := probetest.NewRoot(t, "Test Root", probetest.For(3650*day))
	year := probetest.For(365 * day)

	// A short-lived intermediate under a long-lived leaf: the chain ends
	// with the intermediate.
	inter := root.Intermediate(t, "Short Intermediate", probetest.For(10*day))
	r := check(t, probetest.Chain(inter.Leaf(t, year, "a.test"), inter), "a.test", probetest.Pool(root), probe.Target{})
	want(t, r, "", 10, probe.LevelWarning, true, true)
	if !r.SSL.ExpiresAt.Equal(inter.Cert.NotAfter) || r.SSL.Issuer != "CN=Short Intermediate,O=Lookout test" {
		t.Fatalf("SSL %+v, want the intermediate's expiry", *r.SSL)
	}

	// The server also sends the trusted root cross-signed by an old root,
	// expiring in 3 days. The verified chain ends at the trusted root and
	// does not use the cross-signature: it does not count.
	old := probetest.NewRoot(t, "Old Root", probetest.For(3650*day))
	cross := old.CrossSign(t, root, probetest.For(3*day))
	long := root.Intermediate(t, "Long Intermediate", probetest.For(1000*day))
	sent := probetest.Chain(long.Leaf(t, year, "a.test"), long, cross)
	r = check(t, sent, "a.test", probetest.Pool(root), probe.Target{})
	want(t, r, "", 365, probe.LevelOK, true, true)

	// With both roots trusted there are two verified chains; the one a
	// client can use longest counts.
	r = check(t, sent, "a.test", probetest.Pool(root, old), probe.Target{})
	want(t, r, "", 365, probe.LevelOK, true, true)

	// When only the old root is trusted, the chain does go through the
	// cross-signature, and it counts.
	r = check(t, sent, "a.test", probetest.Pool(old), probe.Target{})
	want(t, r, probe.KindCertExpiring, 3, probe.LevelAlert, true, true)

	// The root is the trust anchor, not part of what the server sends:
	// its own expiry does not count (days_left counts the leaf and the
	// intermediates of the verified chain).
	brief := probetest.NewRoot(t, "Brief Root", probetest.For(3*day))
	r = check(t, probetest.Chain(brief.Leaf(t, year, "a.test")), "a.test", probetest.Pool(brief), probe.Target{})
	want(t, r, "", 365, probe.LevelOK, true, true)

	// An expired intermediate breaks the chain and is named.
	now := time.Now()
	gone := root.Intermediate(t, "Expired Intermediate", probetest.Expired(2*day+time.Hour))
	leaf := gone.Leaf(t, probetest.Validity{NotBefore: now.Add(-time.Hour), NotAfter: now.Add(300 * day)}, "a.test")
	r = check(t, probetest.Chain(leaf, gone), "a.test", probetest.Pool(root), probe.Target{})
	want(t, r, probe.KindCertExpired, -3, probe.LevelAlert, false, true)
	if !r.SSL.ExpiresAt.Equal(gone.Cert.NotAfter) {
		t.Fatalf("expires at %v, want the intermediate's %v", r.SSL.ExpiresAt, gone.Cert.NotAfter)
	}
}
