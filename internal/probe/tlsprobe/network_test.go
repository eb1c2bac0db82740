package tlsprobe_test

import (
	"context"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"lookout/internal/netguard"
	"lookout/internal/probe"
	"lookout/internal/probe/probetest"
	"lookout/internal/probe/tlsprobe"
)

// wantFailure fails unless r failed with kind, transient or not, and
// without SSL details.
func wantFailure(t *testing.T, r probe.Result, kind probe.Kind, transient bool) {
	t.Helper()
	if r.Err == nil || r.Err.Kind != kind || r.Err.Transient != transient || r.Err.Message == "" || r.SSL != nil {
		t.Fatalf("result %+v (err %+v), want kind %s, transient %v, no SSL", r, r.Err, kind, transient)
	}
}

func TestNetworkFailures(t *testing.T) {
	p := tlsprobe.New(probe.Options{})
	ctx := context.Background()

	r := p.Probe(ctx, probe.Target{Domain: "127.0.0.1:" + probetest.ClosedPort(t)})
	wantFailure(t, r, probe.KindConnect, true)

	plain := probetest.Server(t, http.NotFoundHandler())
	r = p.Probe(ctx, probe.Target{Domain: "127.0.0.1:" + probetest.Port(plain)})
	wantFailure(t, r, probe.KindTLSHandshake, false)

	// A server that accepts and never answers: the check's timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	r = p.Probe(ctx, probe.Target{Domain: ln.Addr().String(), Timeout: time.Second})
	wantFailure(t, r, probe.KindTimeout, true)

	r = p.Probe(ctx, probe.Target{})
	wantFailure(t, r, probe.KindInvalidTarget, false)
}

func TestDefaultPort(t *testing.T) {
	dialed := make(chan string, 1)
	p := tlsprobe.New(probe.Options{DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
		dialed <- addr
		return nil, errors.New("not dialing")
	}})
	p.Probe(context.Background(), probe.Target{Domain: "example.com"})
	if got := <-dialed; got != "example.com:443" {
		t.Fatalf("dialed %s", got)
	}
}

// TestSystemRootsHonourSSLCertFile: with no pool injected the probe uses
// the system roots, which Go reads from SSL_CERT_FILE when it is set. Go
// loads the system roots once per process: no other test of this package
// may use them first.
func TestSystemRootsHonourSSLCertFile(t *testing.T) {
	root := probetest.NewRoot(t, "Env Root", probetest.For(3650*day))
	file := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", file)
	t.Setenv("SSL_CERT_DIR", t.TempDir())
	r := check(t, probetest.Chain(root.Leaf(t, probetest.For(100*day), "a.test")), "a.test", nil, probe.Target{})
	want(t, r, "", 100, probe.LevelOK, true, true)
}

// TestGuardRefusesPrivateTargets: with the control plane's guard as its
// dialer, an ssl_check of a loopback server fails at once, before any
// handshake, and is not retried.
func TestGuardRefusesPrivateTargets(t *testing.T) {
	var accepted atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p := tlsprobe.New(probe.Options{DialContext: netguard.New(netguard.Options{}).DialContext})
	for _, domain := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		r := p.Probe(context.Background(), probe.Target{Domain: domain})
		wantFailure(t, r, probe.KindTargetNotAllowed, false)
		if r.Err.Message != "target not allowed: 127.0.0.1 is a loopback address" {
			t.Fatalf("%s: error %q", domain, r.Err.Message)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the server saw %d connections", n)
	}
}
