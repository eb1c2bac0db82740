package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"

	"lookout/control/alert/channel"
)

// sessionTimeout bounds one SMTP session, whatever ctx allows.
const sessionTimeout = time.Minute

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
	if err := c.deliver(ctx, msg); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("email: %w", ctx.Err())
		}
		return err
	}
	return nil
}

func (c *Channel) deliver(ctx context.Context, msg []byte) error {
	host, _, _ := net.SplitHostPort(c.smtp.Addr)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", c.smtp.Addr)
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	conn.SetDeadline(time.Now().Add(sessionTimeout))
	// The end of ctx fails the I/O in progress (after ctx.Err is set, so
	// Send reports the context's error).
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	client, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return classify("greeting", err)
	}
	defer client.Close()
	if ok, _ := client.Extension("STARTTLS"); ok {
		cfg := &tls.Config{ServerName: host, InsecureSkipVerify: c.smtp.InsecureSkipVerify}
		if err := client.StartTLS(cfg); err != nil {
			return classify("STARTTLS", err)
		}
	}
	if c.smtp.User != "" {
		if err := client.Auth(smtp.PlainAuth("", c.smtp.User, c.smtp.Password, host)); err != nil {
			return classify("AUTH", err)
		}
	}
	if err := client.Mail(c.from.Address); err != nil {
		return classify("MAIL FROM", err)
	}
	var refused []string
	for _, to := range c.to {
		err := client.Rcpt(to.Address)
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
	var reply *textproto.Error
	return errors.As(err, &reply) && reply.Code >= 500
}
