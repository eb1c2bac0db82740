package channeltest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"lookout/internal/probe/probetest"
)

// SMTPOptions configure StartSMTP.
type SMTPOptions struct {
	// User and Password, when User is set, are required before MAIL.
	User, Password string
	// Mechanisms are the AUTH mechanisms offered: sasl.Plain, sasl.Login
	// or both (default: PLAIN). AUTH is offered in clear too (the
	// client's rules are under test, not the server's).
	Mechanisms []string
	// TLS offers STARTTLS, with a certificate for 127.0.0.1 and localhost
	// that SMTPServer.Roots trusts.
	TLS bool
	// ImplicitTLS speaks TLS from the first byte (SMTPS, port 465), with
	// the same certificate.
	ImplicitTLS bool
	// Addr is where to listen (default 127.0.0.1:0).
	Addr string
	// Refuse maps recipient addresses to the SMTP code (e.g. 451, 550)
	// their RCPT is refused with; the key "*" refuses every recipient.
	Refuse map[string]int
}

// Mail is one message an SMTPServer accepted.
type Mail struct {
	From string
	To   []string
	Data []byte
	// User is who authenticated, if anyone, and Mechanism how.
	User, Mechanism string
	// TLS tells whether the message came over TLS (STARTTLS or
	// implicit).
	TLS bool
}

// SMTPServer is a real SMTP server (github.com/emersion/go-smtp) on
// loopback that keeps the messages it accepts.
type SMTPServer struct {
	// Addr is host:port.
	Addr string
	// Roots trust the server's certificate (channel.SMTPSettings.RootCAs).
	Roots *x509.CertPool

	opts SMTPOptions
	mu   sync.Mutex
	mail []Mail
}

// StartSMTP starts an SMTP server, closed when the test ends.
func StartSMTP(t testing.TB, opts SMTPOptions) *SMTPServer {
	t.Helper()
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if len(opts.Mechanisms) == 0 {
		opts.Mechanisms = []string{sasl.Plain}
	}
	root := probetest.NewRoot(t, "Lookout test SMTP CA", probetest.For(time.Hour))
	leaf := root.Leaf(t, probetest.For(time.Hour), "127.0.0.1", "localhost")
	s := &SMTPServer{opts: opts, Roots: probetest.Pool(root)}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &smtpSession{server: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.AllowInsecureAuth = true
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{probetest.Chain(leaf)}}
	if opts.TLS {
		srv.TLSConfig = tlsConfig
	}
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = l.Addr().String()
	if opts.ImplicitTLS {
		l = tls.NewListener(l, tlsConfig)
	}
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
	mech   string
	from   string
	to     []string
}

func (s *smtpSession) AuthMechanisms() []string { return s.server.opts.Mechanisms }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, password string) error {
		if user != s.server.opts.User || password != s.server.opts.Password {
			return smtp.ErrAuthFailed
		}
		s.user, s.mech = user, mech
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, password string) error { return check(user, password) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

// loginServer is the server side of AUTH LOGIN, which go-sasl has only
// a client of: the user name (in the AUTH command or after a
// "Username:" challenge), then the password after "Password:".
type loginServer struct {
	check func(user, password string) error
	user  []byte
	// asked: "Username:" was sent; named: the user name came.
	asked, named bool
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	switch {
	case !l.named && response == nil && !l.asked:
		l.asked = true
		return []byte("Username:"), false, nil
	case !l.named:
		l.user, l.named = response, true
		return []byte("Password:"), false, nil
	default:
		return nil, true, l.check(string(l.user), string(response))
	}
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
	s.server.mail = append(s.server.mail, Mail{From: s.from, To: s.to, Data: data, User: s.user, Mechanism: s.mech, TLS: isTLS})
	return nil
}

func (s *smtpSession) Reset() { s.from, s.to = "", nil }

func (s *smtpSession) Logout() error { return nil }
