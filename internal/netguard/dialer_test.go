package netguard_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"lookout/internal/netguard"
)

// listener listens on host (127.0.0.1 or ::1) at a free port, closed when
// the test ends; it skips the test when host is not available.
func listener(t *testing.T, host string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", host, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// wantUntouched checks that ln accepted no connection before now: it
// dials ln without the guard, writes a marker, and the first connection
// ln accepts must be that one.
func wantUntouched(t *testing.T, ln net.Listener) {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("marker")); err != nil {
		t.Fatal(err)
	}
	first, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	b := make([]byte, 6)
	if _, err := io.ReadFull(first, b); err != nil || string(b) != "marker" {
		t.Fatalf("the listener was reached before (first connection read %q, %v)", b, err)
	}
}

// wantRefused checks that err is the guard's refusal of addr.
func wantRefused(t *testing.T, err error, addr string) {
	t.Helper()
	var ge *netguard.Error
	if !errors.Is(err, netguard.ErrNotAllowed) || !errors.As(err, &ge) {
		t.Fatalf("dial: %v, want a refusal", err)
	}
	if want := "target not allowed: " + addr + " is a loopback address"; ge.Error() != want {
		t.Fatalf("refusal %q, want %q", ge, want)
	}
}

func TestDialerRefusesLoopback(t *testing.T) {
	g := netguard.New(netguard.Options{})
	for _, c := range []struct {
		host, dial, refused string
	}{
		{"127.0.0.1", "127.0.0.1", "127.0.0.1"},
		{"127.0.0.1", "localhost", ""}, // whichever answer comes first
		{"::1", "::1", "::1"},
		{"::1", "localhost", ""},
	} {
		t.Run(c.dial+"_on_"+c.host, func(t *testing.T) {
			ln := listener(t, c.host)
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			conn, err := g.DialContext(t.Context(), "tcp", net.JoinHostPort(c.dial, port))
			if err == nil {
				conn.Close()
				t.Fatal("dial succeeded, want a refusal")
			}
			if c.refused != "" {
				wantRefused(t, err, c.refused)
			} else if !errors.Is(err, netguard.ErrNotAllowed) || !strings.Contains(err.Error(), "target not allowed: ") {
				t.Fatalf("dial: %v, want a refusal", err)
			}
			wantUntouched(t, ln)
		})
	}
}

func TestDialerOptions(t *testing.T) {
	ln := listener(t, "127.0.0.1")
	allowed := netip.MustParseAddrPort(ln.Addr().String())
	other := listener(t, "127.0.0.1")

	// Allow lets one address and port through, and no other port.
	g := netguard.New(netguard.Options{Allow: []netip.AddrPort{allowed}})
	conn, err := g.DialContext(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed address: %v", err)
	}
	conn.Close()
	_, err = g.DialContext(t.Context(), "tcp", other.Addr().String())
	wantRefused(t, err, "127.0.0.1")
	wantUntouched(t, other)

	// AllowPrivate turns the rule off.
	conn, err = netguard.New(netguard.Options{AllowPrivate: true}).DialContext(t.Context(), "tcp", other.Addr().String())
	if err != nil {
		t.Fatalf("with AllowPrivate: %v", err)
	}
	conn.Close()
}

func TestTransport(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	get := func(o netguard.Options) error {
		c := &http.Client{Transport: netguard.New(o).Transport()}
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	err := get(netguard.Options{})
	wantRefused(t, err, "127.0.0.1")
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server got %d requests", n)
	}
	if err := get(netguard.Options{Allow: []netip.AddrPort{netip.MustParseAddrPort(srv.Listener.Addr().String())}}); err != nil || hits.Load() != 1 {
		t.Fatalf("allowed: %v, %d requests", err, hits.Load())
	}
	// A proxy (HTTP_PROXY) would connect to the target itself, where the
	// rule cannot see the address: the guarded transport uses none.
	if netguard.New(netguard.Options{}).Transport().Proxy != nil {
		t.Error("the guarded transport uses a proxy")
	}
	if netguard.New(netguard.Options{AllowPrivate: true}).Transport().Proxy == nil {
		t.Error("the unguarded transport ignores HTTP_PROXY")
	}
}
