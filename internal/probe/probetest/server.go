package probetest

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TLSServer starts an HTTPS server on 127.0.0.1 that presents chain and
// answers with h (200 and an empty body when nil). It is closed when the
// test ends.
func TLSServer(t testing.TB, chain tls.Certificate, h http.Handler) *httptest.Server {
	t.Helper()
	if h == nil {
		h = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = listen(t)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{chain}}
	// The handshakes a probe refuses are expected: not worth a log line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// MutualTLSServer is TLSServer asking every client for a certificate
// signed by clientCA, and refusing the handshake without one.
func MutualTLSServer(t testing.TB, chain tls.Certificate, clientCA *Cert, h http.Handler) *httptest.Server {
	t.Helper()
	if h == nil {
		h = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = listen(t)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{chain}, ClientCAs: Pool(clientCA), ClientAuth: tls.RequireAndVerifyClientCert}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// Server starts a plain HTTP server on 127.0.0.1, closed when the test
// ends.
func Server(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = listen(t)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// Port returns the port of a server started here.
func Port(srv *httptest.Server) string {
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// Loopback dials 127.0.0.1 at the port of addr, whatever its host: it
// lets a probe check a host name (for SNI and the host name check) served
// by a test server. Use it as probe.Options.DialContext.
func Loopback(ctx context.Context, network, addr string) (net.Conn, error) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
}

// ClosedPort returns a port on 127.0.0.1 that nothing listens on (it was
// just closed), so a connection to it is refused.
func ClosedPort(t testing.TB) string {
	t.Helper()
	ln := listen(t)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
