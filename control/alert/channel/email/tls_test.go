package email_test

import (
	"context"
	"net"
	"testing"

	"github.com/emersion/go-sasl"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
)

// sendOne sends one alert through a channel with smtp (To srv, trusting
// its certificate) and returns what srv received.
func sendOne(t *testing.T, srv *channeltest.SMTPServer, smtp channel.SMTPSettings) channeltest.Mail {
	t.Helper()
	smtp.Addr, smtp.From, smtp.RootCAs = srv.Addr, "Lookout <alerts@lookout.test>", srv.Roots
	if err := newChannel(t, smtp).Send(context.Background(), channeltest.Alert(channel.MonitorFailed)); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	checkMessage(t, msgs[0].Data)
	return msgs[0]
}

// TestSendImplicitTLS: a server that speaks TLS from the first byte (as
// on port 465) gets the message over TLS, with AUTH.
func TestSendImplicitTLS(t *testing.T) {
	srv := channeltest.StartSMTP(t, channeltest.SMTPOptions{ImplicitTLS: true, User: "lookout", Password: "s3cret"})
	m := sendOne(t, srv, channel.SMTPSettings{ImplicitTLS: true, User: "lookout", Password: "s3cret"})
	if !m.TLS || m.User != "lookout" {
		t.Errorf("TLS %v, user %q; want TLS and AUTH as lookout", m.TLS, m.User)
	}
}

// TestSendPort465: port 465 is implicit TLS without being told. The test
// needs the port free on loopback and the right to listen on it.
func TestSendPort465(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:465")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.1:465: %v", err)
	}
	l.Close()
	srv := channeltest.StartSMTP(t, channeltest.SMTPOptions{ImplicitTLS: true, Addr: "127.0.0.1:465"})
	if m := sendOne(t, srv, channel.SMTPSettings{}); !m.TLS {
		t.Error("the message came in clear")
	}
}

// TestSendSTARTTLSModes: required and opportunistic upgrade when the
// server offers STARTTLS, off does not; without STARTTLS on offer,
// opportunistic goes on in clear (required is refused: TestSendFailures).
func TestSendSTARTTLSModes(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		offered bool
		wantTLS bool
	}{
		{channel.StartTLSRequired, true, true},
		{channel.StartTLSOpportunistic, true, true},
		{"", true, true},
		{channel.StartTLSOff, true, false},
		{channel.StartTLSOpportunistic, false, false},
	} {
		srv := channeltest.StartSMTP(t, channeltest.SMTPOptions{TLS: tc.offered})
		if m := sendOne(t, srv, channel.SMTPSettings{StartTLS: tc.mode}); m.TLS != tc.wantTLS {
			t.Errorf("mode %q, STARTTLS offered %v: TLS %v, want %v", tc.mode, tc.offered, m.TLS, tc.wantTLS)
		}
	}
}

// TestSendAuthMechanisms: AUTH PLAIN when the server offers it, else
// LOGIN.
func TestSendAuthMechanisms(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		want    string
	}{
		{[]string{sasl.Plain}, sasl.Plain},
		{[]string{sasl.Login}, sasl.Login},
		{[]string{sasl.Login, sasl.Plain}, sasl.Plain},
	} {
		srv := channeltest.StartSMTP(t, channeltest.SMTPOptions{TLS: true, User: "lookout", Password: "s3cret", Mechanisms: tc.offered})
		m := sendOne(t, srv, channel.SMTPSettings{User: "lookout", Password: "s3cret"})
		if m.User != "lookout" || m.Mechanism != tc.want {
			t.Errorf("offered %q: user %q by %q, want lookout by %s", tc.offered, m.User, m.Mechanism, tc.want)
		}
	}
}
