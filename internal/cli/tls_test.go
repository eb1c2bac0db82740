package cli

import (
	"context"
	"crypto/tls"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/internal/tlsconf"
	"lookout/internal/tlsconf/tlstest"
)

func TestParseControlTLS(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"LOOKOUT_TLS_CERT": "c.pem", "LOOKOUT_TLS_KEY": "k.pem", "LOOKOUT_TLS_CA": "ca.pem"}[k]
	}
	c, err := parseControl([]string{"--dev"}, getenv, io.Discard)
	if err != nil || c.tls != (tlsconf.Files{Cert: "c.pem", Key: "k.pem", CA: "ca.pem"}) {
		t.Fatalf("from the environment: %+v %v", c, err)
	}
	for _, args := range [][]string{
		{"--dev", "--tls-cert", "c.pem"},
		{"--dev", "--tls-key", "k.pem"},
		{"--dev", "--tls-ca", "ca.pem"},
	} {
		if _, err := parseControl(args, func(string) string { return "" }, io.Discard); ExitCode(err) != 2 {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

func TestSIGHUPReloadsTheCertificate(t *testing.T) {
	ca := tlstest.NewCA(t, "ca")
	files := ca.Node(t, "first")
	certs, err := loadTLS(&controlConfig{tls: files})
	if err != nil {
		t.Fatal(err)
	}
	serving := func() string {
		c, err := certs.ServerConfig().GetCertificate(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.Subject.CommonName
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal)
	done := make(chan struct{})
	go func() {
		reloadOn(ctx, sigs, certs, hclog.NewNullLogger())
		close(done)
	}()
	defer func() { cancel(); <-done }()

	renewed := ca.Node(t, "second")
	for _, f := range [][2]string{{renewed.Cert, files.Cert}, {renewed.Key, files.Key}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := serving(); got != "first" {
		t.Fatalf("before SIGHUP: %q", got)
	}
	sigs <- syscall.SIGHUP
	deadline := time.Now().Add(10 * time.Second)
	for serving() != "second" {
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not reload the certificate")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
