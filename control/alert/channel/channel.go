// Package channel is the one interface every alert channel implements
// (e-mail, Slack, Discord, Teams, PagerDuty, Opsgenie, Telegram, signed
// webhooks, shoutrrr service URLs), and the Registry that finds a channel by its type. Each
// channel is a subpackage exporting Type and New; control/alert/channelregistry
// lists them all, so a new channel touches its own folder and one line
// there.
package channel

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"time"
)

// The alert types.
const (
	MonitorFailed    = "monitor.failed"
	MonitorTimeout   = "monitor.timeout"
	MonitorSlow      = "monitor.slow"
	MonitorMissed    = "monitor.missed"
	MonitorRecovered = "monitor.recovered"
	CheckFailed      = "check.failed"
	CheckRecovered   = "check.recovered"
	SSLWarning       = "ssl.warning"
	SSLAlert         = "ssl.alert"
	AgentOffline     = "agent.offline"
	AgentOnline      = "agent.online"
	// MonitorReminder and CheckReminder recall a failure alert while the
	// monitor stays down (remind_every_seconds).
	MonitorReminder = "monitor.reminder"
	CheckReminder   = "check.reminder"
	// Test is the type of the message POST .../channels/{id}/test sends.
	Test = "test"
)

// Alert is what a channel delivers: one state change of one monitor.
type Alert struct {
	// ID is stable across retries and leader changes: receivers drop a
	// repeat by it.
	ID         string
	Type       string
	OccurredAt time.Time
	AccountID  string
	Monitor    Monitor
	// Event is the event (or check execution) that caused the alert, if
	// any.
	Event *Event
	// PanelURL links to the monitor in the web panel.
	PanelURL string
	// Regions are the regions that saw a check with regions fail in the
	// same slot (check.failed, ssl.alert); empty otherwise.
	Regions []string
	// Region is set on agent.offline and agent.online, which are about an
	// agent region of the account rather than one monitor; Monitor then
	// stands for the region (kind "region", its name, and a uuid stable
	// per account and region, so incident tools pair the two).
	Region *Region
	// ExpectedAt and LastPingAt are set on a ping monitor's alerts: when
	// the run the alert is about was expected (monitor.missed: the run
	// that did not come; the others: the next run after the newest ping)
	// and the newest ping's time. Zero when not known.
	ExpectedAt, LastPingAt time.Time
	// ProblemSince and ProblemType are set on a recovery: when the problem
	// it ends began, and the alert that began it.
	ProblemSince time.Time
	ProblemType  string
	// OriginalAlertID is the failure alert a reminder recalls; DownSince
	// is when the monitor went down (reminders, recoveries), DownSeconds
	// how long it was down (recoveries of an alerted failure).
	OriginalAlertID string
	DownSince       *time.Time
	DownSeconds     *int64
}

// Region is the agent region of an agent.offline or agent.online alert.
type Region struct {
	Name string `json:"name"`
	// Monitors counts the account's monitors in the region: checks that
	// name it and ping monitors whose newest ping came through it.
	Monitors int64 `json:"monitors"`
}

// Monitor is the monitor an alert is about.
type Monitor struct {
	UUID        string   `json:"uuid"`
	Kind        string   `json:"kind"`
	Name        string   `json:"name"`
	DisplayName string   `json:"display_name,omitempty"`
	Project     string   `json:"project,omitempty"`
	Tags        []string `json:"tags"`
	// A ping monitor's runs are expected every ExpectedIntervalSeconds, or
	// on Schedule read in Timezone (an IANA zone; "" is UTC), which is also
	// the zone a summary gives times in.
	ExpectedIntervalSeconds int64  `json:"expected_interval_seconds,omitempty"`
	Schedule                string `json:"schedule,omitempty"`
	Timezone                string `json:"timezone,omitempty"`
	// What a summary compares with, not sent: a ping monitor's timeout, an
	// http_check's expected status (0: any 2xx or 3xx), an ssl_check's
	// domain.
	TimeoutSeconds int64  `json:"-"`
	ExpectedStatus int64  `json:"-"`
	Domain         string `json:"-"`
}

// MarshalJSON writes Tags as [] rather than null when there are none.
func (m Monitor) MarshalJSON() ([]byte, error) {
	type plain Monitor
	if m.Tags == nil {
		m.Tags = []string{}
	}
	// Unescaped: an encoder that escapes HTML escapes the result itself.
	return Marshal(plain(m))
}

// Event is the event behind an alert.
type Event struct {
	EventType  string    `json:"event_type,omitempty"`
	Status     string    `json:"status,omitempty"`
	State      string    `json:"state,omitempty"`
	Duration   *float64  `json:"duration,omitempty"`
	ExitCode   *int64    `json:"exit_code,omitempty"`
	Host       string    `json:"host,omitempty"`
	Message    string    `json:"message,omitempty"`
	Series     string    `json:"series,omitempty"`
	Timestamp  time.Time `json:"timestamp"`
	ReceivedAt time.Time `json:"received_at"`
	// Execution is set when a check execution caused the alert; its
	// fields join the event's (Status is the execution's, Message its
	// error, Timestamp and ReceivedAt when it finished).
	*Execution
}

// Execution is the check execution behind a check alert, as in the
// Management API's executions list.
type Execution struct {
	ID         string         `json:"id"`
	Region     string         `json:"region"`
	Agent      string         `json:"agent,omitempty"`
	Slot       time.Time      `json:"slot"`
	Attempts   int64          `json:"attempts"`
	StartedAt  time.Time      `json:"started_at"`
	FinishedAt time.Time      `json:"finished_at"`
	DurationMs int64          `json:"duration_ms"`
	Error      string         `json:"error,omitempty"`
	HTTP       *ExecutionHTTP `json:"http,omitempty"`
	SSL        *ExecutionSSL  `json:"ssl,omitempty"`
	TCP        *ExecutionTCP  `json:"tcp,omitempty"`
	DNS        *ExecutionDNS  `json:"dns,omitempty"`
}

// ExecutionTCP is what a tcp_check saw.
type ExecutionTCP struct {
	ConnectMs int64 `json:"connect_ms"`
}

// ExecutionDNS is what a dns_check saw: the answers of the asked type.
type ExecutionDNS struct {
	Answers []string `json:"answers"`
	RTTMs   int64    `json:"rtt_ms"`
}

// ExecutionHTTP is what an http_check saw.
type ExecutionHTTP struct {
	StatusCode    int64            `json:"status_code"`
	ResponseBytes int64            `json:"response_bytes"`
	TimingsMs     map[string]int64 `json:"timings_ms"`
}

// ExecutionSSL is what an ssl_check saw of the certificate.
type ExecutionSSL struct {
	ExpiresAt     time.Time `json:"expires_at"`
	DaysLeft      int64     `json:"days_left"`
	Issuer        string    `json:"issuer"`
	Subject       string    `json:"subject"`
	DNSNames      []string  `json:"dns_names"`
	ChainValid    bool      `json:"chain_valid"`
	HostnameValid bool      `json:"hostname_valid"`
}

// The severities of Alert.Severity.
const (
	SeverityFailure  = "failure"
	SeverityWarning  = "warning"
	SeverityRecovery = "recovery"
	SeverityInfo     = "info"
)

// Severity sorts the alert for the colors, icons and priorities of
// channels: SeverityInfo for test messages, SeverityRecovery when it
// ends a problem (Resolved), SeverityWarning for early signs (a slow
// run, a certificate nearing the warning threshold) and SeverityFailure
// for the rest.
func (a Alert) Severity() string {
	switch {
	case a.Type == Test:
		return SeverityInfo
	case a.Resolved():
		return SeverityRecovery
	case a.Type == MonitorSlow || a.Type == SSLWarning:
		return SeverityWarning
	default:
		return SeverityFailure
	}
}

// Resolved tells whether the alert ends a problem (a recovery), which
// incident tools (PagerDuty, Opsgenie) close instead of open.
func (a Alert) Resolved() bool {
	return a.Type == MonitorRecovered || a.Type == CheckRecovered || a.Type == AgentOnline
}

// Channel delivers alerts to one receiver. The dispatcher keeps a channel
// it made for the deliveries that follow, several at once: Send may be
// called from several goroutines and keeps no state between calls.
type Channel interface {
	// Send delivers a. An error wrapped in Permanent is not retried (a
	// receiver that refuses the request for good); any other error is
	// (network errors, 429, 5xx).
	Send(ctx context.Context, a Alert) error
}

// Deps is what channels may use: injected so tests reach local receivers.
type Deps struct {
	// HTTP sends webhook requests (default: DefaultHTTP, which refuses
	// loopback, private, link-local ... addresses).
	HTTP *http.Client
	// SMTP is the operator's mail server (--smtp-* flags of lookout control).
	SMTP SMTPSettings
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// SMTPSettings is the operator's mail server.
type SMTPSettings struct {
	// Addr is host:port; empty means e-mail cannot be sent. Port 465 is
	// TLS from the first byte (implicit TLS); any other port starts in
	// clear and upgrades as StartTLS says.
	Addr string
	// User and Password, when User is set, authenticate with AUTH PLAIN
	// or LOGIN, whichever the server offers (PLAIN first).
	User     string
	Password string
	From     string
	// StartTLS is whether a server on a port other than 465 is asked for
	// STARTTLS: StartTLSOpportunistic (also ""), StartTLSRequired or
	// StartTLSOff.
	StartTLS string
	// ImplicitTLS makes any port TLS from the first byte, as 465 is.
	ImplicitTLS bool
	// RootCAs verify the server's certificate; nil means the system
	// roots. For tests and private CAs.
	RootCAs *x509.CertPool
}

// The values of SMTPSettings.StartTLS (--smtp-starttls).
const (
	// StartTLSOpportunistic upgrades when the server offers STARTTLS and
	// goes on in clear when it does not.
	StartTLSOpportunistic = "opportunistic"
	// StartTLSRequired refuses to send to a server that does not offer
	// STARTTLS.
	StartTLSRequired = "required"
	// StartTLSOff never asks for STARTTLS.
	StartTLSOff = "off"
)

// Factory makes a channel from its JSON config, validating it: a config
// error is returned wrapped in ErrInvalidConfig and names the field.
type Factory func(config json.RawMessage, deps Deps) (Channel, error)

// ErrInvalidConfig marks a channel config that cannot be used.
var ErrInvalidConfig = errors.New("invalid channel config")

// PermanentError is a delivery failure that retrying will not fix.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err as not worth retrying.
func Permanent(err error) error { return &PermanentError{Err: err} }

// IsPermanent tells whether err should not be retried.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// Registry finds channel factories by type, and holds the Deps the
// channels it makes use (the operator's SMTP server, the HTTP client).
type Registry struct {
	factories map[string]Factory
	secrets   map[string]string
	deps      Deps
}

// NewRegistry makes a registry of the given factories, by type, whose
// channels get deps. Unset fields of deps take their defaults:
// DefaultHTTP (which refuses private addresses), time.Now; an empty deps.SMTP means e-mail cannot
// be sent, so e-mail configs fail Validate.
func NewRegistry(factories map[string]Factory, deps Deps) *Registry {
	if deps.HTTP == nil {
		deps.HTTP = DefaultHTTP()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return &Registry{factories: factories, deps: deps}
}

// WithSecrets names, per type, the config field that is a secret (a
// token, a key, a webhook URL that is itself the secret), which the APIs
// never show back in full. It returns r.
func (r *Registry) WithSecrets(fields map[string]string) *Registry {
	r.secrets = fields
	return r
}

// Secret is the config field of type typ that is a secret ("" for none).
func (r *Registry) Secret(typ string) string { return r.secrets[typ] }

// Types lists the registered channel types, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.factories))
	for t := range r.factories {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Has tells whether typ is a registered type.
func (r *Registry) Has(typ string) bool {
	_, ok := r.factories[typ]
	return ok
}

// New makes the channel of type typ from its config, with the
// registry's Deps. A config error is a *ConfigError (wrapping
// ErrInvalidConfig).
func (r *Registry) New(typ string, config json.RawMessage) (Channel, error) {
	f, ok := r.factories[typ]
	if !ok {
		return nil, FieldError("type", "unknown channel type %q", typ)
	}
	return f(config, r.deps)
}

// Validate checks a channel's config, with the registry's Deps, without
// keeping the channel.
func (r *Registry) Validate(typ string, config json.RawMessage) error {
	_, err := r.New(typ, config)
	return err
}

// since says for how long a monitor has been down at at (nothing when
// unknown).
func since(down *time.Time, at time.Time) string {
	if down == nil || at.Before(*down) {
		return ""
	}
	return " (down for " + Duration(at.Sub(*down)) + ")"
}
