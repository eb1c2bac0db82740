// Package opsgenie sends alerts to Opsgenie through its Alert API v2
// (https://docs.opsgenie.com/docs/alert-api).
//
// Config: {"api_key": "...", "region": "us" | "eu", "api_url": "..."};
// region defaults to "us" (https://api.opsgenie.com; "eu" is
// https://api.eu.opsgenie.com) and api_url, when set, replaces the
// region's address.
//
// A monitor has one Opsgenie alert at a time, with alias "lookout-" and
// the monitor's UUID: problems create it (Opsgenie folds repeats into the
// open alert) and recoveries close it. A test message uses
// "lookout-test-" and the alert id instead, so it never touches a real
// alert.
package opsgenie

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"lookout/control/alert/channel"
)

// Type is the channel type in channel objects.
const Type = "opsgenie"

// Secret is the config field that is a secret (the API key): the APIs
// never show it back in full.
const Secret = "api_key"

// Opsgenie's public addresses, by region.
const (
	USAPIURL = "https://api.opsgenie.com"
	EUAPIURL = "https://api.eu.opsgenie.com"
)

// Opsgenie's limits on alert fields, in characters.
const (
	maxMessage     = 130
	maxDescription = 15000
	maxDetail      = 1000
	maxTags        = 20
	maxTag         = 50
)

type config struct {
	APIKey string `json:"api_key"`
	Region string `json:"region"`
	APIURL string `json:"api_url"`
}

// Channel sends to one Opsgenie API integration.
type Channel struct {
	auth http.Header
	base string
	http *http.Client
}

// New makes an Opsgenie channel from its config.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	var cfg config
	if err := channel.DecodeConfig(raw, &cfg); err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, channel.FieldError("api_key", "is required")
	}
	if strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, channel.FieldError("api_key", "must not contain spaces or control characters")
	}
	def := USAPIURL
	switch cfg.Region {
	case "", "us":
	case "eu":
		def = EUAPIURL
	default:
		return nil, channel.FieldError("region", `must be "us" or "eu"`)
	}
	base, err := channel.BaseURL(cfg.APIURL, def)
	if err != nil {
		return nil, err
	}
	return &Channel{auth: http.Header{"Authorization": {"GenieKey " + cfg.APIKey}}, base: base, http: channel.Client(deps.HTTP)}, nil
}

// Send creates the monitor's alert, or closes it for a recovery.
func (c *Channel) Send(ctx context.Context, a channel.Alert) error {
	if err := c.send(ctx, a); err != nil {
		return fmt.Errorf("%s: %w", Type, err)
	}
	return nil
}

func (c *Channel) send(ctx context.Context, a channel.Alert) error {
	alias := "lookout-" + a.Monitor.UUID
	if a.Type == channel.Test {
		alias = "lookout-test-" + a.ID
	}
	if a.Resolved() {
		target := c.base + "/v2/alerts/" + url.PathEscape(alias) + "/close?identifierType=alias"
		return channel.PostJSON(ctx, c.http, target, closeAlert{Source: "Lookout", Note: a.Summary()}, c.auth)
	}
	return channel.PostJSON(ctx, c.http, c.base+"/v2/alerts", create(a, alias), c.auth)
}

type createAlert struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Source      string            `json:"source"`
	Priority    string            `json:"priority"`
}

type closeAlert struct {
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
}

// create is the body that opens an alert for a.
func create(a channel.Alert, alias string) createAlert {
	details := map[string]string{"monitor": a.Monitor.Name, "alert_type": a.Type, "alert_id": a.ID}
	set := func(k, v string) {
		if v != "" {
			details[k] = truncate(v, maxDetail)
		}
	}
	set("display_name", a.Monitor.DisplayName)
	set("project", a.Monitor.Project)
	set("kind", a.Monitor.Kind)
	set("panel_url", a.PanelURL)
	var b strings.Builder
	b.WriteString(a.Summary() + "\n\nMonitor: " + a.Monitor.Name + "\n")
	if a.Monitor.DisplayName != "" {
		b.WriteString("Display name: " + a.Monitor.DisplayName + "\n")
	}
	if a.Monitor.Project != "" {
		b.WriteString("Project: " + a.Monitor.Project + "\n")
	}
	if ev := a.Event; ev != nil {
		set("message", ev.Message)
		set("host", ev.Host)
		if ev.ExitCode != nil {
			set("exit_code", strconv.FormatInt(*ev.ExitCode, 10))
		}
		if ev.Duration != nil {
			set("duration_seconds", strconv.FormatFloat(*ev.Duration, 'f', -1, 64))
		}
		if ev.Message != "" {
			b.WriteString("\nLast message:\n" + ev.Message + "\n")
		}
	}
	if a.PanelURL != "" {
		b.WriteString("\nOpen in Lookout: " + a.PanelURL + "\n")
	}
	var tags []string
	for _, t := range a.Monitor.Tags {
		if t != "" && len(tags) < maxTags {
			tags = append(tags, truncate(t, maxTag))
		}
	}
	return createAlert{
		Message:     truncate(a.Summary(), maxMessage),
		Alias:       alias,
		Description: truncate(b.String(), maxDescription),
		Details:     details,
		Entity:      a.Monitor.Name,
		Tags:        tags,
		Source:      "Lookout",
		Priority:    priority(a),
	}
}

// priority maps an alert to an Opsgenie priority: P3 for early signs
// (slow runs, certificates nearing the warning threshold), P5 for test
// messages, P1 for the rest. Recoveries close the alert instead.
func priority(a channel.Alert) string {
	switch a.Severity() {
	case channel.SeverityWarning:
		return "P3"
	case channel.SeverityInfo:
		return "P5"
	default:
		return "P1"
	}
}

// truncate cuts s to at most n characters, ending it with an ellipsis
// when cut.
func truncate(s string, n int) string { return channel.Fit(s, n, nil) }
