package httpprobe_test

import (
	"context"
	"testing"

	"lookout/internal/probe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/probe/probetest"
)

// A private CA's certificate is trusted through the check's ca, not
// otherwise; tls_skip_verify accepts any certificate.
func TestPrivateCAAndSkipVerify(t *testing.T) {
	public := probetest.NewRoot(t, "Public Root", probetest.For(3650*probetest.Day))
	private := probetest.NewRoot(t, "Corp Root", probetest.For(3650*probetest.Day))
	srv := probetest.TLSServer(t, probetest.Chain(private.Leaf(t, probetest.For(90*probetest.Day), "api.corp.test")), hello)
	url := "https://api.corp.test:" + probetest.Port(srv) + "/"
	p := httpprobe.New(probe.Options{Roots: probetest.Pool(public), DialContext: probetest.Loopback})

	r := p.Probe(context.Background(), probe.Target{URL: url, ExpectedContent: "hello"})
	if r.Err == nil || r.Err.Kind != probe.KindCertUnknownAuthority {
		t.Fatalf("without ca: err %v, want %s", r.Err, probe.KindCertUnknownAuthority)
	}
	if r := p.Probe(context.Background(), probe.Target{URL: url, ExpectedContent: "hello", CA: private.PEM()}); r.Err != nil {
		t.Fatalf("with the private ca: %v", r.Err)
	}
	// Another CA does not help.
	other := probetest.NewRoot(t, "Other Root", probetest.For(3650*probetest.Day))
	if r := p.Probe(context.Background(), probe.Target{URL: url, CA: other.PEM()}); r.Err == nil || r.Err.Kind != probe.KindCertUnknownAuthority {
		t.Fatalf("with another ca: err %v", r.Err)
	}
	if r := p.Probe(context.Background(), probe.Target{URL: url, CA: "not a certificate"}); r.Err == nil || r.Err.Kind != probe.KindInvalidTarget {
		t.Fatalf("with a ca that is not PEM: err %v", r.Err)
	}
	self := probetest.TLSServer(t, probetest.Chain(probetest.SelfSigned(t, probetest.Expired(probetest.Day), "x.test")), hello)
	if r := p.Probe(context.Background(), probe.Target{URL: "https://x.test:" + probetest.Port(self) + "/", ExpectedContent: "hello", TLSSkipVerify: true}); r.Err != nil {
		t.Fatalf("tls_skip_verify: %v", r.Err)
	}
}

// Mutual TLS: a server that asks for a client certificate gets the
// check's; without one (or with one it does not trust) the handshake fails.
func TestMutualTLS(t *testing.T) {
	ca := probetest.NewRoot(t, "Corp Root", probetest.For(3650*probetest.Day))
	clients := probetest.NewRoot(t, "Corp Clients", probetest.For(3650*probetest.Day))
	srv := probetest.MutualTLSServer(t, probetest.Chain(ca.Leaf(t, probetest.For(90*probetest.Day), "mtls.corp.test")), clients, hello)
	url := "https://mtls.corp.test:" + probetest.Port(srv) + "/"
	p := httpprobe.New(probe.Options{DialContext: probetest.Loopback})
	client := clients.ClientLeaf(t, probetest.For(30*probetest.Day), "lookout")

	ok := probe.Target{URL: url, ExpectedContent: "hello", CA: ca.PEM(), ClientCert: client.PEM(), ClientKey: client.KeyPEM(t)}
	if r := p.Probe(context.Background(), ok); r.Err != nil {
		t.Fatalf("with the client certificate: %v", r.Err)
	}
	none := ok
	none.ClientCert, none.ClientKey = "", ""
	r := p.Probe(context.Background(), none)
	if r.Err == nil || r.Err.Kind != probe.KindTLSHandshake || r.Err.Transient {
		t.Fatalf("without a client certificate: err %v", r.Err)
	}
	stranger := probetest.SelfSigned(t, probetest.For(30*probetest.Day), "stranger")
	wrong := ok
	wrong.ClientCert, wrong.ClientKey = stranger.PEM(), stranger.KeyPEM(t)
	r = p.Probe(context.Background(), wrong)
	if r.Err == nil || r.Err.Kind != probe.KindTLSHandshake {
		t.Fatal("an untrusted client certificate passed")
	}
	mismatched := ok
	mismatched.ClientKey = stranger.KeyPEM(t)
	r = p.Probe(context.Background(), mismatched)
	if r.Err == nil || r.Err.Kind != probe.KindInvalidTarget {
		t.Fatalf("a key of another certificate: err %v", r.Err)
	}
}
