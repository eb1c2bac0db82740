package email_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/email"
)

const to = `{"to": ["ops@example.com", "Dev Team <dev@example.com>"]}`

func newChannel(t *testing.T, smtp channel.SMTPSettings) channel.Channel {
	t.Helper()
	c, err := email.New(json.RawMessage(to), channel.Deps{SMTP: smtp, Now: channeltest.Clock})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSendSTARTTLSAndAuth(t *testing.T) {
	srv := channeltest.StartSMTP(t, channeltest.SMTPOptions{User: "lookout", Password: "s3cret", TLS: true})
	c := newChannel(t, channel.SMTPSettings{
		Addr: srv.Addr, User: "lookout", Password: "s3cret", From: "Lookout <alerts@lookout.test>", RootCAs: srv.Roots,
	})
	if err := c.Send(context.Background(), channeltest.Alert(channel.MonitorFailed)); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if m.From != "alerts@lookout.test" || !slices.Equal(m.To, []string{"ops@example.com", "dev@example.com"}) {
		t.Errorf("envelope: from %q to %q", m.From, m.To)
	}
	if !m.TLS || m.User != "lookout" || m.Mechanism != "PLAIN" {
		t.Errorf("TLS %v, user %q by %q; want STARTTLS and AUTH PLAIN as lookout", m.TLS, m.User, m.Mechanism)
	}
	checkMessage(t, m.Data)
}

// checkMessage checks the headers and parts, and compares the decoded
// parts with the golden files.
func checkMessage(t *testing.T, data []byte) {
	t.Helper()
	if bytes.Contains(bytes.ReplaceAll(data, []byte("\r\n"), nil), []byte("\n")) {
		t.Error("the message has bare LF line ends")
	}
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"Subject":        `[Lookout] Nightly <backup> & "restore" failed with exit code 2: pg_dump: error: <FATAL> password authentication failed for user "backup" & gave up`,
		"From":           `"Lookout" <alerts@lookout.test>`,
		"To":             `<ops@example.com>, "Dev Team" <dev@example.com>`,
		"Date":           "Sat, 14 Mar 2026 15:09:26 +0000",
		"Message-ID":     "<a1f3c9e2-5b7d-4e8f-9a0b-1c2d3e4f5a6b@lookout>",
		"MIME-Version":   "1.0",
		"Auto-Submitted": "auto-generated",
	} {
		got := msg.Header.Get(k)
		if k == "Subject" {
			got = subject
		}
		if got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	parts := multipart.NewReader(msg.Body, params["boundary"])
	for _, want := range []struct{ typ, golden string }{
		{"text/plain; charset=utf-8", "body.txt"},
		{"text/html; charset=utf-8", "body.html"},
	} {
		p, err := parts.NextPart() // decodes quoted-printable
		if err != nil {
			t.Fatal(err)
		}
		if p.Header.Get("Content-Type") != want.typ {
			t.Errorf("part Content-Type %q, want %q", p.Header.Get("Content-Type"), want.typ)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		channeltest.Golden(t, want.golden, body)
		text := string(body)
		if want.golden == "body.txt" {
			mustContain(t, text, `Nightly <backup> & "restore" failed`, `<FATAL>`,
				"https://lookout.example.com/monitors/7c9e6679-7425-40de-944b-e07fc1f90ae7?tab=events&page=1")
		} else {
			mustContain(t, text, "Nightly &lt;backup&gt; &amp; &#34;restore&#34; failed", "&lt;FATAL&gt;",
				`href="https://lookout.example.com/monitors/7c9e6679-7425-40de-944b-e07fc1f90ae7?tab=events&amp;page=1"`)
			if strings.Contains(text, "<FATAL>") || strings.Contains(text, "<backup>") {
				t.Error("the HTML part has unescaped text")
			}
		}
	}
	if _, err := parts.NextPart(); err != io.EOF {
		t.Errorf("a third part, or a broken end: %v", err)
	}
}

func mustContain(t *testing.T, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("lacks %s:\n%s", w, s)
		}
	}
}

func TestSendPlain(t *testing.T) {
	srv := channeltest.StartSMTP(t, channeltest.SMTPOptions{})
	c := newChannel(t, channel.SMTPSettings{Addr: srv.Addr, From: "alerts@lookout.test"})
	a := channeltest.Alert(channel.MonitorRecovered)
	a.ID, a.Event, a.PanelURL = "id with <spaces>", nil, ""
	if err := c.Send(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	m := srv.Messages()[0]
	if m.TLS || m.User != "" {
		t.Errorf("TLS %v, user %q; want neither", m.TLS, m.User)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	if id := msg.Header.Get("Message-ID"); id != "<id-with--spaces-@lookout>" {
		t.Errorf("Message-ID %q", id)
	}
	body, _ := io.ReadAll(msg.Body)
	if bytes.Contains(body, []byte("Open in Lookout")) || bytes.Contains(body, []byte("Last message")) {
		t.Errorf("empty link or message shown:\n%s", body)
	}
}

func TestSendFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      channeltest.SMTPOptions
		smtp      channel.SMTPSettings
		untrusted bool // the client does not trust the server's certificate
		permanent bool
		delivered bool
	}{
		{name: "untrusted certificate", opts: channeltest.SMTPOptions{TLS: true}, untrusted: true},
		{name: "4xx recipient", opts: channeltest.SMTPOptions{Refuse: map[string]int{"dev@example.com": 451}}},
		{name: "5xx every recipient", opts: channeltest.SMTPOptions{Refuse: map[string]int{"*": 550}}, permanent: true},
		{name: "5xx one recipient", opts: channeltest.SMTPOptions{Refuse: map[string]int{"dev@example.com": 550}}, permanent: true, delivered: true},
		{name: "untrusted certificate, implicit TLS", opts: channeltest.SMTPOptions{ImplicitTLS: true}, smtp: channel.SMTPSettings{ImplicitTLS: true}, untrusted: true},
		{name: "wrong password", opts: channeltest.SMTPOptions{User: "lookout", Password: "right", TLS: true},
			smtp: channel.SMTPSettings{User: "lookout", Password: "wrong"}, permanent: true},
		{name: "STARTTLS required, not offered", smtp: channel.SMTPSettings{StartTLS: channel.StartTLSRequired}, permanent: true},
		{name: "no AUTH PLAIN or LOGIN", opts: channeltest.SMTPOptions{User: "lookout", Password: "right", TLS: true, Mechanisms: []string{"XOAUTH2"}},
			smtp: channel.SMTPSettings{User: "lookout", Password: "right"}, permanent: true},
		{name: "auth required", opts: channeltest.SMTPOptions{User: "lookout", Password: "right"}, permanent: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := channeltest.StartSMTP(t, tc.opts)
			tc.smtp.Addr, tc.smtp.From = srv.Addr, "alerts@lookout.test"
			if !tc.untrusted {
				tc.smtp.RootCAs = srv.Roots
			}
			err := newChannel(t, tc.smtp).Send(context.Background(), channeltest.Alert(channel.MonitorFailed))
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if channel.IsPermanent(err) != tc.permanent {
				t.Errorf("permanent = %v, want %v: %v", !tc.permanent, tc.permanent, err)
			}
			if got := len(srv.Messages()) == 1; got != tc.delivered {
				t.Errorf("delivered = %v, want %v", got, tc.delivered)
			}
		})
	}
}

func TestSendNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	err = newChannel(t, channel.SMTPSettings{Addr: addr, From: "a@b.c"}).Send(context.Background(), channeltest.Alert(channel.MonitorFailed))
	if err == nil || channel.IsPermanent(err) {
		t.Fatalf("err = %v, want a retryable error", err)
	}
}

func TestSendRespectsContext(t *testing.T) {
	// A server that accepts and never greets.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		conn, err := l.Accept()
		if err == nil {
			<-done
			conn.Close()
		}
	}()
	c := newChannel(t, channel.SMTPSettings{Addr: l.Addr().String(), From: "a@b.c"})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = c.Send(ctx, channeltest.Alert(channel.MonitorFailed))
	if !errors.Is(err, context.DeadlineExceeded) || channel.IsPermanent(err) {
		t.Errorf("err = %v, want a retryable context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Send took %v", d)
	}
}
