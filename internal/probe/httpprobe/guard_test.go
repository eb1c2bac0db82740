package httpprobe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"lookout/internal/netguard"
	"lookout/internal/probe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/probe/probetest"
)

// counted starts a loopback server that counts its requests and answers
// with h (200 when nil).
func counted(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h != nil {
			h.ServeHTTP(w, r)
		}
	}))
	return srv, &n
}

// wantNotAllowed fails unless r was refused by the guard at once: kind
// target_not_allowed, not transient, the error beginning "target not
// allowed:".
func wantNotAllowed(t *testing.T, r probe.Result) {
	t.Helper()
	wantErr(t, r, probe.KindTargetNotAllowed, false)
	if !strings.HasPrefix(r.Err.Message, "target not allowed: ") {
		t.Fatalf("error %q does not begin \"target not allowed: \"", r.Err.Message)
	}
}

func TestGuardRefusesPrivateTargets(t *testing.T) {
	srv, hits := counted(t, nil)
	port := probetest.Port(srv)
	p := httpprobe.New(probe.Options{DialContext: netguard.New(netguard.Options{}).DialContext})
	for _, url := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::ffff:127.0.0.1]:" + port + "/"} {
		r := p.Probe(context.Background(), probe.Target{URL: url, ExpectedContent: "x"})
		wantNotAllowed(t, r)
		if r.HTTP.StatusCode != 0 {
			t.Fatalf("%s: status %d, want none", url, r.HTTP.StatusCode)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server got %d requests", n)
	}
}

func TestGuardRefusesIPv6Loopback(t *testing.T) {
	srv, hits := counted(t, nil)
	p := httpprobe.New(probe.Options{DialContext: netguard.New(netguard.Options{}).DialContext})
	r := p.Probe(context.Background(), probe.Target{URL: "http://[::1]:" + probetest.Port(srv) + "/"})
	wantNotAllowed(t, r)
	if r.Err.Message != "target not allowed: ::1 is a loopback address" {
		t.Fatalf("error %q", r.Err.Message)
	}
	if hits.Load() != 0 {
		t.Fatal("the server got a request")
	}
}

// TestGuardAtRedirect: the rule holds for each request of a redirect
// chain. The first server is let through by the guard's allow-list (it
// stands for a public site); its redirect to another loopback server is
// refused, and that server sees nothing.
func TestGuardAtRedirect(t *testing.T) {
	internal, hits := counted(t, nil)
	public := probetest.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			_, _ = w.Write([]byte("public"))
			return
		}
		http.Redirect(w, r, internal.URL+"/admin", http.StatusFound)
	}))
	g := netguard.New(netguard.Options{Allow: []netip.AddrPort{netip.MustParseAddrPort(public.Listener.Addr().String())}})
	p := httpprobe.New(probe.Options{DialContext: g.DialContext})

	r := p.Probe(context.Background(), probe.Target{URL: public.URL, ExpectedStatus: 200})
	wantNotAllowed(t, r)
	if r.HTTP.Redirects != 1 {
		t.Fatalf("refused after %d redirects, want at the first", r.HTTP.Redirects)
	}
	if hits.Load() != 0 {
		t.Fatal("the redirect's target got a request")
	}
	// The allowed address itself is reached.
	r = p.Probe(context.Background(), probe.Target{URL: public.URL + "/ok", ExpectedContent: "public"})
	if r.Err != nil {
		t.Fatalf("the allowed server: %v", r.Err)
	}
}
