// Package email sends alerts by e-mail through the operator's SMTP server
// (the --smtp-* flags of lookout control).
//
// Config: {"to": ["ops@example.com", "Ops <ops@example.com>", ...]}.
// Like every channel type it accepts an optional api_url, which e-mail
// ignores: the mail server is the operator's, never the account's, so an
// account cannot make the control plane connect to a host of its
// choosing.
//
// New fails with ErrInvalidConfig when the operator has configured no
// SMTP server (deps.SMTP.Addr), so an e-mail channel is refused when it
// is saved (channel.Registry.Validate, with the operator's Deps) rather
// than failing at every alert.
//
// The message is multipart/alternative (text and HTML), with Message-ID
// <alert-id@lookout> so a repeat of the same alert can be recognised.
// Delivery uses github.com/emersion/go-smtp's client: implicit TLS on
// port 465, else STARTTLS as deps.SMTP.StartTLS says (when offered, by
// default); AUTH PLAIN or LOGIN when a user is set, never in clear but
// to a loopback server. SMTP 5xx replies are permanent, everything else
// (4xx, network and TLS errors) is retried.
package email

import (
	"encoding/json"
	"fmt"
	"net"
	"net/mail"
	"time"

	"lookout/control/alert/channel"
)

// Type is the channel type in channel objects.
const Type = "email"

// Secret is the config field that is a secret (none: recipients are no secret): the APIs
// never show it back in full.
const Secret = ""

// maxRecipients bounds the to list.
const maxRecipients = 50

type config struct {
	To []string `json:"to"`
	// APIURL is accepted for uniformity with the other types, and
	// ignored.
	APIURL string `json:"api_url"`
}

// Channel sends to a fixed list of addresses.
type Channel struct {
	smtp channel.SMTPSettings
	from *mail.Address
	to   []*mail.Address
	now  func() time.Time
}

// New makes an e-mail channel from its config and the operator's SMTP
// settings.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	var cfg config
	if err := channel.DecodeConfig(raw, &cfg); err != nil {
		return nil, err
	}
	if len(cfg.To) == 0 {
		return nil, channel.FieldError("to", "must list at least one address")
	}
	if len(cfg.To) > maxRecipients {
		return nil, channel.FieldError("to", "must list at most %d addresses", maxRecipients)
	}
	c := &Channel{smtp: deps.SMTP, now: deps.Now}
	for i, s := range cfg.To {
		addr, err := mail.ParseAddress(s)
		if err != nil {
			return nil, channel.FieldError(fmt.Sprintf("to[%d]", i), "%q is not an e-mail address", s)
		}
		c.to = append(c.to, addr)
	}
	if deps.SMTP.Addr == "" {
		return nil, channel.InvalidConfig("the operator has not configured SMTP (--smtp-addr)")
	}
	if _, _, err := net.SplitHostPort(deps.SMTP.Addr); err != nil {
		return nil, channel.InvalidConfig("the operator's SMTP address (--smtp-addr) is not host:port")
	}
	switch deps.SMTP.StartTLS {
	case "", channel.StartTLSOpportunistic, channel.StartTLSRequired, channel.StartTLSOff:
	default:
		return nil, channel.InvalidConfig("the operator's --smtp-starttls is not opportunistic, required or off")
	}
	from, err := sender(deps.SMTP)
	if err != nil {
		return nil, err
	}
	c.from = from
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// sender is the From address: --smtp-from, else --smtp-user when it is an
// address.
func sender(s channel.SMTPSettings) (*mail.Address, error) {
	if s.From != "" {
		addr, err := mail.ParseAddress(s.From)
		if err != nil {
			return nil, channel.InvalidConfig("the operator's sender (--smtp-from) is not an e-mail address")
		}
		return addr, nil
	}
	if addr, err := mail.ParseAddress(s.User); err == nil {
		return addr, nil
	}
	return nil, channel.InvalidConfig("the operator has not configured a sender (--smtp-from)")
}
