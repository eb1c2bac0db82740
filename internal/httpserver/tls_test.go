package httpserver_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"

	"lookout/internal/httpserver"
	"lookout/internal/tlsconf"
	"lookout/internal/tlsconf/tlstest"
)

// serveTLS serves the protocol and the client certificate's name on
// loopback with certs' server config.
func serveTLS(t *testing.T, certs *tlsconf.Certs) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserver.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "-"
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
			name = r.TLS.VerifiedChains[0][0].Subject.CommonName
		}
		io.WriteString(w, r.Proto+" "+name)
	}), httpserver.Options{TLS: certs.ServerConfig()})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// getTLS fetches /health with cfg, over HTTP/2 when h2, on a new connection.
func getTLS(t *testing.T, addr string, cfg *tls.Config, h2 bool) (string, *tls.ConnectionState, error) {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: cfg, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP1(!h2)
	tr.Protocols.SetHTTP2(h2)
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/health")
	if err != nil {
		return "", nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), res.TLS, err
}

func TestServesHTTPSWithOptionalClientCertificates(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	addr := serveTLS(t, ca.Certs(t, "server"))
	pool, err := tlsconf.LoadPool(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, h2 := range []bool{false, true} {
		body, _, err := getTLS(t, addr, &tls.Config{RootCAs: pool}, h2)
		want := map[bool]string{false: "HTTP/1.1 -", true: "HTTP/2.0 -"}[h2]
		if err != nil || body != want {
			t.Fatalf("h2=%v without a client certificate: %q %v, want %q", h2, body, err, want)
		}
	}
	// A client certificate from the CA is verified and seen by handlers.
	body, _, err := getTLS(t, addr, ca.Certs(t, "peer").ClientConfig(), true)
	if err != nil || body != "HTTP/2.0 peer" {
		t.Fatalf("with a client certificate: %q %v", body, err)
	}
	// One from another CA is refused.
	if body, _, err := getTLS(t, addr, tlstest.NewCA(t, "other").Certs(t, "rogue").ClientConfig(), true); err == nil {
		t.Fatalf("a client certificate from another CA was accepted: %q", body)
	}
	// A client that does not trust the CA refuses the server.
	if _, _, err := getTLS(t, addr, &tls.Config{}, false); err == nil {
		t.Fatal("a server certificate from an unknown CA was accepted")
	}
	// Cleartext HTTP on the TLS port gets no answer of ours.
	if res, err := http.Get("http://" + addr + "/health"); err == nil {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) == "HTTP/1.1 -" {
			t.Fatal("cleartext HTTP served on the TLS listener")
		}
	}
}

func TestReloadServesTheNewCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	files := ca.Node(t, "first")
	certs, err := tlsconf.Load(files)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveTLS(t, certs)
	pool, err := tlsconf.LoadPool(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	cn := func() string {
		t.Helper()
		_, st, err := getTLS(t, addr, &tls.Config{RootCAs: pool}, false)
		if err != nil {
			t.Fatal(err)
		}
		return st.PeerCertificates[0].Subject.CommonName
	}
	if got := cn(); got != "first" {
		t.Fatalf("serves %q, want first", got)
	}
	// A bad file leaves the current certificate in use.
	renewed := ca.Node(t, "second")
	copyFile(t, renewed.Cert, files.Cert)
	if err := certs.Reload(); err == nil {
		t.Fatal("reload of a certificate that does not match its key succeeded")
	}
	if got := cn(); got != "first" {
		t.Fatalf("after a failed reload: serves %q, want first", got)
	}
	copyFile(t, renewed.Key, files.Key)
	if err := certs.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := cn(); got != "second" {
		t.Fatalf("after reload: serves %q, want second", got)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Every answer over HTTPS tells browsers to use HTTPS only; none over
// cleartext HTTP does (it would be ignored, and wrong on a listener
// without TLS).
func TestStrictTransportSecurityOverTLSOnly(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	addr := serveTLS(t, ca.Certs(t, "server"))
	pool, err := tlsconf.LoadPool(ca.File)
	if err != nil {
		t.Fatal(err)
	}
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: new(http.Protocols)}
		tr.Protocols.SetHTTP1(!h2)
		tr.Protocols.SetHTTP2(h2)
		res, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/anything")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		tr.CloseIdleConnections()
		if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
			t.Errorf("h2=%v: Strict-Transport-Security %q", h2, got)
		}
	}
	plain := serve(t, httpserver.Options{})
	res, err := http.Get("http://" + plain + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("cleartext: Strict-Transport-Security %q", got)
	}
}
