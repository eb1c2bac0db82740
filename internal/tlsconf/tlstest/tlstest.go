// Package tlstest makes the certificates TLS tests need with crypto/x509:
// a CA and node certificates (server and client use) for 127.0.0.1,
// written as PEM files.
package tlstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lookout/internal/tlsconf"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// File is the CA certificate's PEM file.
	File string
}

// NewCA makes a self-signed CA and writes its certificate to a file.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	cert := create(t, tmpl, tmpl, key, key)
	ca := &CA{Cert: cert, Key: key, File: filepath.Join(t.TempDir(), "ca.pem")}
	writePEM(t, ca.File, "CERTIFICATE", cert.Raw)
	return ca
}

// Node makes a certificate for hosts (IPs or names; 127.0.0.1 when none),
// good for server and client use, and returns the files of a node that
// presents it and trusts this CA.
func (ca *CA) Node(t testing.TB, name string, hosts ...string) tlsconf.Files {
	t.Helper()
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1"}
	}
	key := newKey(t)
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		NotBefore:   time.Now().Add(-time.Hour),
		NotAfter:    time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	cert := create(t, tmpl, ca.Cert, key, ca.Key)
	dir := t.TempDir()
	f := tlsconf.Files{Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem"), CA: ca.File}
	writePEM(t, f.Cert, "CERTIFICATE", cert.Raw)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, f.Key, "PRIVATE KEY", der)
	return f
}

// Certs makes a node certificate and loads it.
func (ca *CA) Certs(t testing.TB, name string, hosts ...string) *tlsconf.Certs {
	t.Helper()
	c, err := tlsconf.Load(ca.Node(t, name, hosts...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func create(t testing.TB, tmpl, parent *x509.Certificate, key, signer crypto.Signer) *x509.Certificate {
	t.Helper()
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func writePEM(t testing.TB, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) crypto.Signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
