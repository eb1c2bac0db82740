package manifest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strconv"
	"strings"
)

// The TLS options of checks: a ca (http_check, ssl_check) and a client
// certificate (http_check).

// ca decodes a ca: PEM of one or more certificates, and nothing else.
func (d *decoder) ca() string {
	s, ok := d.str("ca", CodeCAInvalid)
	if !ok {
		return ""
	}
	if why := pemCertificates(s); why != "" {
		d.add("ca", CodeCAInvalid, "must be PEM of one or more CA certificates: %s", why)
	}
	return s
}

// pemCertificates says what is wrong with s as PEM certificates, or "".
// A block that is not a certificate (a private key pasted by mistake) is
// refused: a ca and a client_cert are shown back in full.
func pemCertificates(s string) string {
	if len(s) > MaxPEM {
		return "longer than 32 KiB"
	}
	rest := []byte(s)
	n := 0
	for {
		block, next := pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return "it holds a " + block.Type + " block"
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "certificate " + strconv.Itoa(n+1) + " cannot be read: " + strings.TrimPrefix(err.Error(), "x509: ")
		}
		n++
		rest = next
	}
	switch {
	case n == 0:
		return "no PEM certificate found"
	case len(bytes.TrimSpace(rest)) > 0:
		return "text follows the last certificate"
	}
	return ""
}

// clientCert decodes client_cert and client_key: both or neither, PEM of
// a certificate and its private key. A masked key (Mask) stands for the
// stored one; whether it still fits the certificate is checked once it is
// restored (CheckSecrets).
func (d *decoder) clientCert() (cert, key string) {
	cert, certOK := d.str("client_cert", CodeClientCertInvalid)
	key, keyOK := d.str("client_key", CodeClientCertInvalid)
	switch {
	case !certOK && !keyOK:
		return "", ""
	case certOK != keyOK:
		if !d.failed("client_cert") && !d.failed("client_key") {
			d.add("client_cert", CodeClientCertInvalid, "and client_key are given together")
		}
		return cert, key
	case len(key) > MaxPEM:
		d.add("client_key", CodeClientCertInvalid, "must be at most 32 KiB")
	case key == Mask:
		if why := pemCertificates(cert); why != "" {
			d.add("client_cert", CodeClientCertInvalid, "must be PEM of a certificate: %s", why)
		}
	default:
		if why := keyPairProblem(cert, key); why != "" {
			d.add("client_cert", CodeClientCertInvalid, "and client_key must be PEM of a certificate and its private key: %s", why)
		}
	}
	return cert, key
}

// keyPairProblem says why cert and key are not a certificate and its
// key, or "". The reason never quotes the key.
func keyPairProblem(cert, key string) string {
	if why := pemCertificates(cert); why != "" {
		return why
	}
	if _, err := tls.X509KeyPair([]byte(cert), []byte(key)); err != nil {
		return strings.TrimPrefix(err.Error(), "tls: ")
	}
	return ""
}
