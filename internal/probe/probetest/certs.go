// Package probetest makes what the probe tests need: certificates made
// with crypto/x509 (a test CA, intermediates, leaves, cross-signatures,
// self-signed ones) and real TLS servers on 127.0.0.1 that present them.
package probetest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// Day is 24 hours.
const Day = 24 * time.Hour

// Cert is a certificate and its private key.
type Cert struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Validity is a certificate's validity period.
type Validity struct {
	NotBefore time.Time
	NotAfter  time.Time
}

// For returns the validity from an hour before now to d after now, plus
// an hour so that days_left counted a moment later is still d in whole
// days.
func For(d time.Duration) Validity {
	now := time.Now()
	return Validity{NotBefore: now.Add(-time.Hour), NotAfter: now.Add(d + time.Hour)}
}

// Expired returns a validity that ended d ago.
func Expired(d time.Duration) Validity {
	now := time.Now()
	return Validity{NotBefore: now.Add(-d - 365*Day), NotAfter: now.Add(-d)}
}

// NewRoot makes a self-signed root CA.
func NewRoot(t testing.TB, name string, v Validity) *Cert {
	t.Helper()
	key := newKey(t)
	return sign(t, caTemplate(name, v), key, nil, key)
}

// Intermediate makes an intermediate CA signed by ca.
func (ca *Cert) Intermediate(t testing.TB, name string, v Validity) *Cert {
	t.Helper()
	return sign(t, caTemplate(name, v), newKey(t), ca, nil)
}

// CrossSign makes a certificate of sub (its name and key) signed by ca:
// the cross-signature of a root by another.
func (ca *Cert) CrossSign(t testing.TB, sub *Cert, v Validity) *Cert {
	t.Helper()
	return sign(t, caTemplate(sub.Cert.Subject.CommonName, v), sub.Key, ca, nil)
}

// Leaf makes a server certificate for hosts (DNS names or IP addresses)
// signed by ca.
func (ca *Cert) Leaf(t testing.TB, v Validity, hosts ...string) *Cert {
	t.Helper()
	return sign(t, leafTemplate(v, hosts), newKey(t), ca, nil)
}

// SelfSigned makes a server certificate for hosts signed by its own key.
func SelfSigned(t testing.TB, v Validity, hosts ...string) *Cert {
	t.Helper()
	key := newKey(t)
	return sign(t, leafTemplate(v, hosts), key, nil, key)
}

// Pool returns a pool of the given roots.
func Pool(roots ...*Cert) *x509.CertPool {
	p := x509.NewCertPool()
	for _, r := range roots {
		p.AddCert(r.Cert)
	}
	return p
}

// Chain is what a server presents: the leaf's key, the leaf, then the
// other certificates in the order given.
func Chain(leaf *Cert, rest ...*Cert) tls.Certificate {
	c := tls.Certificate{PrivateKey: leaf.Key, Leaf: leaf.Cert, Certificate: [][]byte{leaf.Cert.Raw}}
	for _, r := range rest {
		c.Certificate = append(c.Certificate, r.Cert.Raw)
	}
	return c
}

func caTemplate(name string, v Validity) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Lookout test"}},
		NotBefore:             v.NotBefore,
		NotAfter:              v.NotAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
}

func leafTemplate(v Validity, hosts []string) *x509.Certificate {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: hosts[0]},
		NotBefore:   v.NotBefore,
		NotAfter:    v.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return tmpl
}

// sign makes a certificate from tmpl for key, signed by parent (or by
// selfKey when parent is nil).
func sign(t testing.TB, tmpl *x509.Certificate, key crypto.Signer, parent *Cert, selfKey crypto.Signer) *Cert {
	t.Helper()
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	issuer, signer := tmpl, selfKey
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Cert{Cert: c, Key: key}
}

func newKey(t testing.TB) crypto.Signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// ClientLeaf makes a client certificate for name signed by ca (mutual
// TLS: a probe presents it to a server that asks for one).
func (ca *Cert) ClientLeaf(t testing.TB, v Validity, name string) *Cert {
	t.Helper()
	tmpl := leafTemplate(v, []string{name})
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return sign(t, tmpl, newKey(t), ca, nil)
}

// PEM returns c's certificate in PEM, as a check's ca or client_cert
// holds it.
func (c *Cert) PEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw}))
}

// KeyPEM returns c's private key in PEM (PKCS #8), as a check's
// client_key holds it.
func (c *Cert) KeyPEM(t testing.TB) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}
