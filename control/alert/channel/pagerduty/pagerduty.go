// Package pagerduty sends alerts to PagerDuty through the Events API v2
// (https://developer.pagerduty.com/docs/events-api-v2/overview/).
//
// Config: {"routing_key": "...", "api_url": "..."}; api_url is optional
// and replaces https://events.pagerduty.com.
//
// A monitor has one incident at a time: the dedup key is "lookout-" and
// the monitor's UUID, problems trigger it (again) and recoveries resolve
// it. A test message uses "lookout-test-" and the alert id instead, so it
// never touches a real incident; it opens an info incident that someone
// resolves by hand.
package pagerduty

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"lookout/control/alert/channel"
)

// Type is the channel type in channel objects.
const Type = "pagerduty"

// Secret is the config field that is a secret (the integration key): the APIs
// never show it back in full.
const Secret = "routing_key"

// DefaultAPIURL is PagerDuty's public address.
const DefaultAPIURL = "https://events.pagerduty.com"

// maxSummary is PagerDuty's limit on payload.summary.
const maxSummary = 1024

type config struct {
	RoutingKey string `json:"routing_key"`
	APIURL     string `json:"api_url"`
}

// Channel sends to one PagerDuty service integration.
type Channel struct {
	routingKey string
	endpoint   string
	http       *http.Client
	now        func() time.Time
}

// New makes a PagerDuty channel from its config.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	var cfg config
	if err := channel.DecodeConfig(raw, &cfg); err != nil {
		return nil, err
	}
	if cfg.RoutingKey == "" {
		return nil, channel.FieldError("routing_key", "is required")
	}
	base, err := channel.BaseURL(cfg.APIURL, DefaultAPIURL)
	if err != nil {
		return nil, err
	}
	c := &Channel{routingKey: cfg.RoutingKey, endpoint: base + "/v2/enqueue", http: channel.Client(deps.HTTP), now: deps.Now}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Send triggers or resolves the monitor's incident.
func (c *Channel) Send(ctx context.Context, a channel.Alert) error {
	if err := channel.PostJSON(ctx, c.http, c.endpoint, c.event(a), nil); err != nil {
		return fmt.Errorf("%s: %w", Type, err)
	}
	return nil
}

type event struct {
	RoutingKey  string   `json:"routing_key"`
	EventAction string   `json:"event_action"`
	DedupKey    string   `json:"dedup_key"`
	Payload     *payload `json:"payload,omitempty"`
	Client      string   `json:"client,omitempty"`
	ClientURL   string   `json:"client_url,omitempty"`
	Links       []link   `json:"links,omitempty"`
}

type payload struct {
	Summary       string  `json:"summary"`
	Source        string  `json:"source"`
	Severity      string  `json:"severity"`
	Timestamp     string  `json:"timestamp"`
	Component     string  `json:"component,omitempty"`
	Group         string  `json:"group,omitempty"`
	Class         string  `json:"class"`
	CustomDetails details `json:"custom_details"`
}

type details struct {
	Monitor     string   `json:"monitor"`
	DisplayName string   `json:"display_name,omitempty"`
	Project     string   `json:"project,omitempty"`
	Kind        string   `json:"kind,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Alert       string   `json:"alert"`
	AlertID     string   `json:"alert_id"`
	Message     string   `json:"message,omitempty"`
	Host        string   `json:"host,omitempty"`
	ExitCode    *int64   `json:"exit_code,omitempty"`
	Duration    *float64 `json:"duration_seconds,omitempty"`
	PanelURL    string   `json:"panel_url,omitempty"`
}

type link struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

// event is the Events API v2 body for a.
func (c *Channel) event(a channel.Alert) event {
	e := event{RoutingKey: c.routingKey, EventAction: "trigger", DedupKey: "lookout-" + a.Monitor.UUID}
	if a.Type == channel.Test {
		e.DedupKey = "lookout-test-" + a.ID
	}
	if a.Resolved() {
		e.EventAction = "resolve"
		return e
	}
	at := a.OccurredAt
	if at.IsZero() {
		at = c.now()
	}
	d := details{
		Monitor: a.Monitor.Name, DisplayName: a.Monitor.DisplayName, Project: a.Monitor.Project,
		Kind: a.Monitor.Kind, Tags: a.Monitor.Tags, Alert: a.Summary(), AlertID: a.ID, PanelURL: a.PanelURL,
	}
	if ev := a.Event; ev != nil {
		d.Message, d.Host, d.ExitCode, d.Duration = ev.Message, ev.Host, ev.ExitCode, ev.Duration
	}
	e.Payload = &payload{
		Summary:       truncate(a.Summary(), maxSummary),
		Source:        "lookout",
		Severity:      severity(a),
		Timestamp:     at.UTC().Format(time.RFC3339),
		Component:     a.Monitor.Name,
		Group:         a.Monitor.Project,
		Class:         a.Type,
		CustomDetails: d,
	}
	e.Client = "Lookout"
	if a.PanelURL != "" {
		e.ClientURL = a.PanelURL
		e.Links = []link{{Href: a.PanelURL, Text: "Open in Lookout"}}
	}
	return e
}

// severity maps an alert to a PagerDuty severity: warning for early
// signs (slow runs, certificates nearing the warning threshold), info
// for test messages, critical for the rest. Recoveries resolve instead.
func severity(a channel.Alert) string {
	switch a.Severity() {
	case channel.SeverityWarning:
		return "warning"
	case channel.SeverityInfo:
		return "info"
	default:
		return "critical"
	}
}

// truncate cuts s to at most n bytes on a rune boundary, ending it with
// an ellipsis when cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
