package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"lookout/control/alert/channel"
)

// sessionTimeout bounds one SMTP session, whatever ctx allows.
const sessionTimeout = time.Minute

// commandTimeout bounds the wait for each reply of the server.
const commandTimeout = 30 * time.Second

// noSTARTTLS is the text of go-smtp's error for a server that does not
// offer STARTTLS (a plain errors.New, so it is told by its text; the
// tests of both modes fail if it changes).
const noSTARTTLS = "smtp: server doesn't support STARTTLS"

// Send mails the alert to every recipient in one SMTP transaction.
// Recipients the server refuses for good (5xx) are skipped: the others
// still get the message and Send returns a permanent error naming the
// refused ones. A temporary refusal (4xx) of any recipient abandons the
// transaction, so a retry cannot deliver twice.
func (c *Channel) Send(ctx context.Context, a channel.Alert) error {
	msg, err := c.message(a)
	if err != nil {
		return channel.Permanent(fmt.Errorf("email: rendering: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	if err := c.deliver(ctx, msg); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("email: %w", ctx.Err())
		}
		return err
	}
	return nil
}

func (c *Channel) deliver(ctx context.Context, msg []byte) error {
	client, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer client.Close()
	// EHLO now, so that a failing greeting or TLS handshake is reported
	// as what it is rather than as a missing extension.
	if err := client.Hello("localhost"); err != nil {
		return classify("EHLO", err)
	}
	if c.smtp.User != "" {
		if err := c.auth(client); err != nil {
			return err
		}
	}
	var opts *smtp.MailOptions
	if !ascii(c.from.Address) || !ascii(c.toList()...) {
		opts = &smtp.MailOptions{UTF8: true}
	}
	if err := client.Mail(c.from.Address, opts); err != nil {
		return classify("MAIL FROM", err)
	}
	var refused []string
	for _, to := range c.to {
		err := client.Rcpt(to.Address, nil)
		if err == nil {
			continue
		}
		if !isPermanent(err) {
			_ = client.Reset()
			return classify("RCPT TO "+to.Address, err)
		}
		refused = append(refused, fmt.Sprintf("%s (%v)", to.Address, err))
	}
	if len(refused) == len(c.to) {
		return channel.Permanent(fmt.Errorf("email: every recipient was refused: %s", strings.Join(refused, ", ")))
	}
	w, err := client.Data()
	if err != nil {
		return classify("DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return classify("DATA", err)
	}
	if err := w.Close(); err != nil {
		return classify("DATA", err)
	}
	// The message is accepted; a failing QUIT changes nothing.
	_ = client.Quit()
	if len(refused) > 0 {
		return channel.Permanent(fmt.Errorf("email: sent, but these recipients were refused: %s", strings.Join(refused, ", ")))
	}
	return nil
}

// connect opens a session with the server, encrypted as the settings
// say: TLS from the first byte on port 465 (or with ImplicitTLS), else
// STARTTLS unless it is off. Without STARTTLS on offer, required mode
// fails for good and opportunistic mode connects again in clear.
func (c *Channel) connect(ctx context.Context) (*smtp.Client, error) {
	host, port, _ := net.SplitHostPort(c.smtp.Addr)
	config := &tls.Config{ServerName: host, RootCAs: c.smtp.RootCAs, MinVersion: tls.VersionTLS12}
	conn, err := dial(ctx, c.smtp.Addr)
	if err != nil {
		return nil, err
	}
	switch {
	case c.smtp.ImplicitTLS || port == "465":
		tc := tls.Client(conn, config)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("email: TLS: %w", err)
		}
		return newClient(tc), nil
	case c.smtp.StartTLS == channel.StartTLSOff:
		return newClient(conn), nil
	}
	client, err := smtp.NewClientStartTLS(conn, config)
	switch {
	case err == nil:
		client.CommandTimeout = commandTimeout
		return client, nil
	case err.Error() != noSTARTTLS:
		return nil, classify("STARTTLS", err)
	case c.smtp.StartTLS == channel.StartTLSRequired:
		return nil, channel.Permanent(errors.New("email: the server does not offer STARTTLS, which --smtp-starttls required asks for"))
	}
	if conn, err = dial(ctx, c.smtp.Addr); err != nil {
		return nil, err
	}
	return newClient(conn), nil
}

// newClient starts a session on conn.
func newClient(conn net.Conn) *smtp.Client {
	client := smtp.NewClient(conn)
	client.CommandTimeout = commandTimeout
	return client
}

// dial connects to addr. The end of ctx closes the connection, which
// fails the I/O in progress: go-smtp sets a deadline of its own for
// each command, so a deadline set here would not hold.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("email: %w", err)
	}
	context.AfterFunc(ctx, func() { conn.Close() })
	return conn, nil
}

// auth authenticates with AUTH PLAIN, or LOGIN when the server offers
// only that. The password is only sent over TLS, or to a server on
// loopback.
func (c *Channel) auth(client *smtp.Client) error {
	host, _, _ := net.SplitHostPort(c.smtp.Addr)
	if _, isTLS := client.TLSConnectionState(); !isTLS && !loopback(host) {
		return channel.Permanent(errors.New("email: AUTH: the connection is not encrypted, and the password is only sent over TLS (port 465, or STARTTLS) or to a server on loopback"))
	}
	var mech sasl.Client
	switch {
	case client.SupportsAuth(sasl.Plain):
		mech = sasl.NewPlainClient("", c.smtp.User, c.smtp.Password)
	case client.SupportsAuth(sasl.Login):
		mech = sasl.NewLoginClient(c.smtp.User, c.smtp.Password)
	default:
		return channel.Permanent(errors.New("email: AUTH: the server offers neither PLAIN nor LOGIN"))
	}
	if err := client.Auth(mech); err != nil {
		return classify("AUTH", err)
	}
	return nil
}

// loopback tells whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// toList is the recipients' addresses.
func (c *Channel) toList() []string {
	out := make([]string, len(c.to))
	for i, to := range c.to {
		out[i] = to.Address
	}
	return out
}

// ascii tells whether every s is ASCII (else MAIL asks for SMTPUTF8).
func ascii(s ...string) bool {
	for _, v := range s {
		if strings.ContainsFunc(v, func(r rune) bool { return r >= utf8.RuneSelf }) {
			return false
		}
	}
	return true
}

// classify wraps an error of the SMTP step: permanent for a 5xx reply,
// retryable otherwise (4xx replies, network and TLS errors).
func classify(step string, err error) error {
	err = fmt.Errorf("email: %s: %w", step, err)
	if isPermanent(err) {
		return channel.Permanent(err)
	}
	return err
}

// isPermanent tells whether err is a 5xx SMTP reply.
func isPermanent(err error) bool {
	var reply *smtp.SMTPError
	if errors.As(err, &reply) {
		return reply.Code >= 500
	}
	var proto *textproto.Error
	return errors.As(err, &proto) && proto.Code >= 500
}
