package main

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCertsMutualTLS makes a set and uses it: a server with n1's
// certificate, requiring client certificates from the CA, is reached as
// "lookout" by a client presenting agent-eu's; a second run keeps the
// files unless forced.
func TestCertsMutualTLS(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir, []string{"n1"}, []string{"agent-eu"}, []string{"lookout", "127.0.0.1"}, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("ca.crt: %v", err)
	}
	serverCert, err := tls.LoadX509KeyPair(filepath.Join(dir, "n1.crt"), filepath.Join(dir, "n1.key"))
	if err != nil {
		t.Fatal(err)
	}
	clientCert, err := tls.LoadX509KeyPair(filepath.Join(dir, "agent-eu.crt"), filepath.Join(dir, "agent-eu.key"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "lookout", Certificates: []tls.Certificate{clientCert}}}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if fi, err := os.Stat(filepath.Join(dir, "n1.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("n1.key: %v %v, want mode 0600", fi.Mode(), err)
	}
	if err := run(dir, []string{"n1"}, nil, nil, time.Hour, false); err == nil {
		t.Error("a second run replaced the existing set without -force")
	}
	if err := run(dir, []string{"n1"}, nil, nil, time.Hour, true); err != nil {
		t.Errorf("-force: %v", err)
	}
}
