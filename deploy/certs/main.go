// Command certs makes the certificates of a TLS deployment with Go's
// crypto/x509 (no openssl needed): a CA, and for each control node and
// each agent a key and a certificate signed by it, good for server and
// client use (mutual TLS between nodes, agents presenting client
// certificates).
//
//	go run ./deploy/certs -dir deploy/tls                      # what docker-compose.tls.yml mounts
//	go run ./deploy/certs -dir /etc/lookout/tls -nodes n1,n2,n3 -hosts lookout.example.com,10.0.0.11,10.0.0.12,10.0.0.13
//
// Every node certificate names its node and every -hosts entry (names or
// IPs). Existing files are kept unless -force; the CA key is written too,
// to sign more certificates later: keep it offline.
package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	dir := flag.String("dir", "deploy/tls", "where to write ca.crt, ca.key, NAME.crt and NAME.key")
	nodes := flag.String("nodes", "n1,n2,n3", "control nodes, comma-separated: each certificate names its node")
	agents := flag.String("agents", "agent-eu,agent-us", "agents, comma-separated (client certificates)")
	hosts := flag.String("hosts", "lookout,localhost,127.0.0.1", "more names and IPs every node certificate is valid for")
	days := flag.Int("days", 825, "validity of the certificates, in days")
	force := flag.Bool("force", false, "replace existing files")
	flag.Parse()
	if err := run(*dir, split(*nodes), split(*agents), split(*hosts), time.Duration(*days)*24*time.Hour, *force); err != nil {
		fmt.Fprintln(os.Stderr, "certs:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func run(dir string, nodes, agents, hosts []string, validity time.Duration, force bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !force {
		if _, err := os.Stat(filepath.Join(dir, "ca.crt")); err == nil {
			return fmt.Errorf("%s already holds ca.crt: keeping it (-force replaces everything)", dir)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Lookout CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity + 24*time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return err
	}
	ca, _ := x509.ParseCertificate(caDER)
	if err := write(dir, "ca", caDER, caKey); err != nil {
		return err
	}
	for _, n := range nodes {
		if err := leaf(dir, n, append([]string{n}, hosts...), ca, caKey, now, validity); err != nil {
			return err
		}
	}
	for _, a := range agents {
		if err := leaf(dir, a, []string{a}, ca, caKey, now, validity); err != nil {
			return err
		}
	}
	fmt.Printf("certs: wrote ca and %s to %s\n", strings.Join(append(append([]string{}, nodes...), agents...), ", "), dir)
	return nil
}

// leaf writes NAME.crt and NAME.key: a certificate for names (host names
// or IPs), for server and client authentication.
func leaf(dir, name string, names []string, ca *x509.Certificate, caKey crypto.Signer, now time.Time, validity time.Duration) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range names {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	return write(dir, name, der, key)
}

// write saves NAME.crt (0644) and NAME.key (0600).
func write(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}
