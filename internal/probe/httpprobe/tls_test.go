package httpprobe_test

import (
	"context"
	"net/http"
	"testing"

	"lookout/internal/probe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/probe/probetest"
)

// hello answers "hello".
var hello = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hello")) })

func TestHTTPSTimings(t *testing.T) {
	ca := probetest.NewRoot(t, "Test Root", probetest.For(3650*probetest.Day))
	srv := probetest.TLSServer(t, probetest.Chain(ca.Leaf(t, probetest.For(90*probetest.Day), "127.0.0.1")), hello)
	// A redirect from http to https: both requests' phases add up.
	plain := probetest.Server(t, http.RedirectHandler(srv.URL+"/", http.StatusFound))

	p := httpprobe.New(probe.Options{Roots: probetest.Pool(ca)})
	r := p.Probe(context.Background(), probe.Target{URL: plain.URL, ExpectedContent: "hello"})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	h := r.HTTP
	if h.StatusCode != 200 || h.ResponseBytes != 5 || h.Redirects != 1 {
		t.Fatalf("HTTP = %+v", *h)
	}
	tm := h.Timings
	// An IP address needs no DNS; every other phase was seen.
	if tm.DNS != 0 || tm.Connect <= 0 || tm.TLS <= 0 || tm.TTFB <= 0 || tm.Total < tm.TTFB || r.Duration < tm.Total {
		t.Fatalf("timings %+v, duration %v", tm, r.Duration)
	}
}

func TestTLSErrorsNamed(t *testing.T) {
	ca := probetest.NewRoot(t, "Test Root", probetest.For(3650*probetest.Day))
	other := probetest.NewRoot(t, "Other Root", probetest.For(3650*probetest.Day))
	year := probetest.For(365 * probetest.Day)
	for _, tc := range []struct {
		name string
		cert *probetest.Cert
		host string
		kind probe.Kind
	}{
		{"valid", ca.Leaf(t, year, "a.test"), "a.test", ""},
		{"expired", ca.Leaf(t, probetest.Expired(2*probetest.Day), "a.test"), "a.test", probe.KindCertExpired},
		{"wrong host", ca.Leaf(t, year, "a.test"), "b.test", probe.KindCertHostname},
		{"unknown authority", other.Leaf(t, year, "a.test"), "a.test", probe.KindCertUnknownAuthority},
		{"self-signed", probetest.SelfSigned(t, year, "a.test"), "a.test", probe.KindCertSelfSigned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := probetest.TLSServer(t, probetest.Chain(tc.cert), hello)
			p := httpprobe.New(probe.Options{Roots: probetest.Pool(ca), DialContext: probetest.Loopback})
			r := p.Probe(context.Background(), probe.Target{
				URL: "https://" + tc.host + ":" + probetest.Port(srv) + "/", ExpectedStatus: 200})
			if tc.kind == "" {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				return
			}
			wantErr(t, r, tc.kind, false)
			t.Log(r.Err.Message)
		})
	}
}

func TestNotTLS(t *testing.T) {
	srv := probetest.Server(t, hello)
	r := run(t, probe.Target{URL: "https://127.0.0.1:" + probetest.Port(srv) + "/", ExpectedStatus: 200})
	wantErr(t, r, probe.KindTLSHandshake, false)
}
