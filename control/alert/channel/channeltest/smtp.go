package channeltest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPOptions configure StartSMTP.
type SMTPOptions struct {
	// User and Password, when User is set, are required (AUTH PLAIN)
	// before MAIL.
	User, Password string
	// TLS offers STARTTLS with a self-signed certificate.
	TLS bool
	// Refuse maps recipient addresses to the SMTP code (e.g. 451, 550)
	// their RCPT is refused with; the key "*" refuses every recipient.
	Refuse map[string]int
}

// Mail is one message an SMTPServer accepted.
type Mail struct {
	From string
	To   []string
	Data []byte
	// User is who authenticated, if anyone.
	User string
	// TLS tells whether the message came over STARTTLS.
	TLS bool
}

// SMTPServer is a real SMTP server (github.com/emersion/go-smtp) on
// loopback that keeps the messages it accepts.
type SMTPServer struct {
	// Addr is host:port.
	Addr string

	opts SMTPOptions
	mu   sync.Mutex
	mail []Mail
}

// StartSMTP starts an SMTP server, closed when the test ends.
func StartSMTP(t testing.TB, opts SMTPOptions) *SMTPServer {
	t.Helper()
	s := &SMTPServer{opts: opts}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{server: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	if opts.TLS {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

// Messages returns the messages accepted so far.
func (s *SMTPServer) Messages() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mail...)
}

type smtpSession struct {
	server *SMTPServer
	conn   *smtp.Conn
	user   string
	from   string
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, user, password string) error {
		if user != s.server.opts.User || password != s.server.opts.Password {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}), nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.server.opts.User != "" && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	code, ok := s.server.opts.Refuse[to]
	if !ok {
		code = s.server.opts.Refuse["*"]
	}
	if code != 0 {
		return &smtp.SMTPError{Code: code, Message: "rejected by the test"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.server.mu.Lock()
	defer s.server.mu.Unlock()
	s.server.mail = append(s.server.mail, Mail{From: s.from, To: s.to, Data: data, User: s.user, TLS: isTLS})
	return nil
}

func (s *smtpSession) Reset() { s.from, s.to = "", nil }

func (s *smtpSession) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and localhost.
func selfSigned(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
