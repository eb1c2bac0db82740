// Package tlsconf is a node's TLS setup: its certificate and key (read
// from PEM files and swapped atomically on Reload, so SIGHUP picks up a
// renewed certificate without a restart) and the CA its peers are
// verified against, as the tls.Configs of the HTTP listener, the raft
// stream layer and the node-to-node clients.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
)

// Files names the PEM files of a node's TLS setup. CA is optional: with
// it, node-to-node traffic is mutual TLS verified against it.
type Files struct {
	Cert, Key, CA string
}

// Certs is a node's certificate (reloadable) and its CA pool.
type Certs struct {
	files Files
	cert  atomic.Pointer[tls.Certificate]
	pool  *x509.CertPool // nil: the system roots, and no mutual TLS
}

// Load reads the files; Cert and Key are required.
func Load(f Files) (*Certs, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("tls: both a certificate and a key are needed")
	}
	c := &Certs{files: f}
	if f.CA != "" {
		pool, err := LoadPool(f.CA)
		if err != nil {
			return nil, err
		}
		c.pool = pool
	}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadPool reads the PEM certificates of a CA file into a pool.
func LoadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tls: read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls: %s holds no PEM certificate", file)
	}
	return pool, nil
}

// Reload reads the certificate and key again; on error the previous ones
// stay in use. Connections made afterwards present the new certificate.
func (c *Certs) Reload() error {
	cert, err := tls.LoadX509KeyPair(c.files.Cert, c.files.Key)
	if err != nil {
		return fmt.Errorf("tls: load certificate: %w", err)
	}
	c.cert.Store(&cert)
	return nil
}

func (c *Certs) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cert.Load(), nil
}

func (c *Certs) getClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return c.cert.Load(), nil
}

// ServerConfig is the config of the node's HTTP listener. With a CA, a
// client certificate is asked for and, when one is sent, verified
// against the CA (the node-to-node RPC handler then requires a verified
// one); clients without one (browsers, the CLI, senders of pings)
// are served as before.
func (c *Certs) ServerConfig() *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.getCertificate}
	if c.pool != nil {
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		cfg.ClientCAs = c.pool
	}
	return cfg
}

// PeerServerConfig is the config of a listener only peers use (raft):
// a client certificate signed by the CA is required. Nil without a CA.
func (c *Certs) PeerServerConfig() *tls.Config {
	if c.pool == nil {
		return nil
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: c.getCertificate,
		ClientAuth:     tls.RequireAndVerifyClientCert,
		ClientCAs:      c.pool,
	}
}

// ClientConfig is the config of node-to-node connections: peers are
// verified against the CA (the system roots without one), and with a CA
// the node presents its own certificate.
func (c *Certs) ClientConfig() *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: c.pool}
	if c.pool != nil {
		cfg.GetClientCertificate = c.getClientCertificate
	}
	return cfg
}
