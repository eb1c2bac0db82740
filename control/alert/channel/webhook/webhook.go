// Package webhook is the generic webhook channel: it POSTs the alert as
// the JSON body docs/api.md describes (Routing and delivery), signed in the Standard
// Webhooks scheme (https://www.standardwebhooks.com).
//
// Config: {"url": "https://...", "secret": "whsec_...", "api_url": "..."}.
// url is required, an absolute http(s) URL. secret is required here
// (the operator and management APIs make one when the user gives none,
// before the config reaches New): the signing key in base64, optionally
// prefixed with "whsec_" as Standard Webhooks writes it; the key is the
// base64-decoded bytes after the prefix. api_url is optional and
// replaces the scheme and host of url (see channel.Endpoint).
//
// Receivers written in Go may decode the body into Payload and check the
// signature with Verify.
package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"lookout/control/alert/channel"
)

// Type is the channel type in configs and the registry.
const Type = "webhook"

// Secret is the config field that is a secret (the signing secret): the APIs
// never show it back in full.
const Secret = "secret"

// Payload is the body of a generic webhook.
// Receivers written in Go may decode into it.
type Payload struct {
	ID         string    `json:"id"`
	Type       string    `json:"type"`
	OccurredAt time.Time `json:"occurred_at"`
	// Summary is the alert in one line a person reads.
	Summary string `json:"summary"`
	Account struct {
		ID string `json:"id"`
	} `json:"account"`
	Monitor channel.Monitor `json:"monitor"`
	// Event is the event or check execution behind the alert; absent
	// when there is none.
	Event    *channel.Event `json:"event,omitempty"`
	PanelURL string         `json:"panel_url"`
	// Region is the agent region of agent.offline and agent.online;
	// absent on the other types.
	Region *channel.Region `json:"region,omitempty"`
	// Regions are the regions that saw a check with regions fail in the
	// same slot (check.failed, ssl.alert); absent otherwise.
	Regions []string `json:"regions,omitempty"`
	// ExpectedAt and LastPingAt, on a ping monitor's alerts: when the run
	// the alert is about was expected (monitor.missed: the run that did
	// not come; the others: the next run after the newest ping) and the
	// time of the newest ping. Absent when not known (no run expected, no
	// ping yet) and on the other monitors' alerts.
	ExpectedAt *time.Time `json:"expected_at,omitempty"`
	LastPingAt *time.Time `json:"last_ping_at,omitempty"`
	// OriginalAlertID is the failure alert a reminder (monitor.reminder,
	// check.reminder) recalls; DownSince when the monitor went down
	// (reminders, recoveries); DownSeconds how long it was down
	// (recoveries). Absent otherwise.
	OriginalAlertID string     `json:"original_alert_id,omitempty"`
	DownSince       *time.Time `json:"down_since,omitempty"`
	DownSeconds     *int64     `json:"down_seconds,omitempty"`
}

// NewPayload returns the body for a. Times are in UTC; tags are [] rather
// than null when the monitor has none (channel.Monitor.MarshalJSON).
func NewPayload(a channel.Alert) Payload {
	p := Payload{ID: a.ID, Type: a.Type, OccurredAt: a.OccurredAt.UTC(), Summary: a.Summary(), Monitor: a.Monitor, PanelURL: a.PanelURL, Region: a.Region, Regions: a.Regions,
		OriginalAlertID: a.OriginalAlertID, DownSince: a.DownSince, DownSeconds: a.DownSeconds}
	p.Account.ID = a.AccountID
	p.ExpectedAt, p.LastPingAt = utcOrNil(a.ExpectedAt), utcOrNil(a.LastPingAt)
	if a.Event != nil {
		e := *a.Event
		e.Timestamp, e.ReceivedAt = e.Timestamp.UTC(), e.ReceivedAt.UTC()
		p.Event = &e
	}
	return p
}

// utcOrNil is t in UTC, or nil when it is zero.
func utcOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

type config struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
	APIURL string `json:"api_url"`
}

type sender struct {
	addr   string
	key    []byte
	client *http.Client
	now    func() time.Time
}

// New makes a webhook channel from its config; it is a channel.Factory.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	var c config
	if err := channel.DecodeConfig(raw, &c); err != nil {
		return nil, err
	}
	addr, err := channel.Endpoint("url", c.URL, c.APIURL)
	if err != nil {
		return nil, err
	}
	if c.Secret == "" {
		return nil, channel.FieldError("secret", "is required")
	}
	key, err := signingKey(c.Secret)
	if err != nil {
		return nil, channel.FieldError("secret", "%v", err)
	}
	now := deps.Now
	if now == nil {
		now = time.Now
	}
	return &sender{addr: addr, key: key, client: channel.Client(deps.HTTP), now: now}, nil
}

// Send POSTs a signed: webhook-id is the alert id (the same on every
// retry, so receivers drop repeats), webhook-timestamp the time of this
// attempt.
func (s *sender) Send(ctx context.Context, a channel.Alert) error {
	body, err := channel.Marshal(NewPayload(a))
	if err != nil {
		return channel.Permanent(fmt.Errorf("webhook: encoding the body: %w", err))
	}
	ts := strconv.FormatInt(s.now().Unix(), 10)
	h := http.Header{}
	h.Set("webhook-id", a.ID)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", sign(s.key, a.ID, ts, body))
	if err := channel.Post(ctx, s.client, s.addr, body, h); err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	return nil
}

// signingKey decodes a Standard Webhooks secret: base64, optionally
// after "whsec_".
func signingKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("must be base64, optionally prefixed with whsec_")
	}
	return key, nil
}

// sign returns the webhook-signature value: "v1," and the base64
// HMAC-SHA256 of id.timestamp.body.
func sign(key []byte, id, ts string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}
