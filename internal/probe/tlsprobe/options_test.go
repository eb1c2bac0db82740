package tlsprobe_test

import (
	"context"
	"strconv"
	"testing"

	"lookout/internal/probe"
	"lookout/internal/probe/probetest"
	"lookout/internal/probe/tlsprobe"
)

// An internal certificate, signed by a private CA, is a failure without
// the check's ca and a success with it; the port comes from config.port.
func TestPrivateCAAndPort(t *testing.T) {
	public := probetest.NewRoot(t, "Public Root", probetest.For(3650*day))
	corp := probetest.NewRoot(t, "Corp Root", probetest.For(3650*day))
	srv := probetest.TLSServer(t, probetest.Chain(corp.Leaf(t, probetest.For(200*day), "db.corp.test")), nil)
	port, _ := strconv.Atoi(probetest.Port(srv))
	p := tlsprobe.New(probe.Options{Roots: probetest.Pool(public), DialContext: probetest.Loopback})

	r := p.Probe(context.Background(), probe.Target{Domain: "db.corp.test", Port: port})
	want(t, r, probe.KindCertUnknownAuthority, 200, probe.LevelAlert, false, true)
	r = p.Probe(context.Background(), probe.Target{Domain: "db.corp.test", Port: port, CA: corp.PEM()})
	want(t, r, "", 200, probe.LevelOK, true, true)

	r = p.Probe(context.Background(), probe.Target{Domain: "db.corp.test", Port: port, CA: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"})
	if r.Err == nil || r.Err.Kind != probe.KindInvalidTarget {
		t.Fatalf("a ca that is no certificate: err %v", r.Err)
	}
}
