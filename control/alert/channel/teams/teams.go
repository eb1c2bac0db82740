// Package teams is the Microsoft Teams channel: it posts alerts to a
// Teams Workflows webhook ("Post to a channel when a webhook request is
// received") as a message holding one Adaptive Card
// (https://learn.microsoft.com/microsoftteams/platform/task-modules-and-cards/cards/cards-reference#adaptive-card).
//
// Config: {"webhook_url": "https://...logic.azure.com/workflows/...",
// "api_url": "..."}. webhook_url is required, an absolute http(s) URL;
// its query (api-version, sig) is kept. api_url is optional and
// replaces the scheme and host of webhook_url (channel.Endpoint).
package teams

import (
	"encoding/json"
	"time"

	"lookout/control/alert/channel"
)

// Type is the channel type in configs and the registry.
const Type = "teams"

// Secret is the config field that is a secret (the webhook URL is itself the secret): the APIs
// never show it back in full.
const Secret = "webhook_url"

// Limits, in characters. Teams takes messages of about 28 KB in all;
// these keep a card well under that.
const (
	maxTitle   = 500
	maxFact    = 500
	maxMessage = 6000
)

// New makes a Teams channel from its config; it is a channel.Factory.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	return channel.ChatWebhook(Type, func(a channel.Alert) any { return build(a) })(raw, deps)
}

type message struct {
	Type        string       `json:"type"`
	Attachments []attachment `json:"attachments"`
}

type attachment struct {
	ContentType string `json:"contentType"`
	Content     card   `json:"content"`
}

type card struct {
	Schema  string   `json:"$schema"`
	Type    string   `json:"type"`
	Version string   `json:"version"`
	Body    []any    `json:"body"`
	Actions []action `json:"actions,omitempty"`
	MSTeams struct {
		Width string `json:"width"`
	} `json:"msteams"`
}

type textBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Size   string `json:"size,omitempty"`
	Weight string `json:"weight,omitempty"`
	Color  string `json:"color,omitempty"`
	Wrap   bool   `json:"wrap"`
}

type factSet struct {
	Type  string `json:"type"`
	Facts []fact `json:"facts"`
}

type fact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// richTextBlock with TextRuns shows text as it is: unlike a TextBlock
// it does not read markdown.
type richTextBlock struct {
	Type    string    `json:"type"`
	Inlines []textRun `json:"inlines"`
}

type textRun struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	FontType string `json:"fontType,omitempty"`
}

type action struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

// build returns the Teams message for a: an Adaptive Card 1.4 with the
// title in a color by alert type, a fact set (monitor, project, alert
// type, host, exit code, duration, time), the event's message in a
// monospace run, and an "Open in Lookout" button to the panel.
func build(a channel.Alert) message {
	facts := []fact{}
	for _, f := range channel.Facts(a) {
		facts = append(facts, fact{Title: f.Name, Value: channel.Fit(f.Value, maxFact, nil)})
	}
	facts = append(facts, fact{Title: "Occurred", Value: a.OccurredAt.UTC().Format(time.RFC3339)})
	c := card{
		Schema:  "http://adaptivecards.io/schemas/adaptive-card.json",
		Type:    "AdaptiveCard",
		Version: "1.4",
		Body: []any{
			textBlock{Type: "TextBlock", Text: channel.Fit(a.Summary(), maxTitle, nil), Size: "Large", Weight: "Bolder", Color: color(a), Wrap: true},
			factSet{Type: "FactSet", Facts: facts},
		},
	}
	c.MSTeams.Width = "Full"
	if msg := channel.Message(a); msg != "" {
		c.Body = append(c.Body, richTextBlock{Type: "RichTextBlock", Inlines: []textRun{{
			Type: "TextRun", Text: channel.Fit(msg, maxMessage, nil), FontType: "Monospace",
		}}})
	}
	if a.PanelURL != "" {
		c.Actions = []action{{Type: "Action.OpenUrl", Title: "Open in Lookout", URL: a.PanelURL}}
	}
	return message{Type: "message", Attachments: []attachment{{
		ContentType: "application/vnd.microsoft.card.adaptive", Content: c,
	}}}
}

// color is Attention (red) for failures, Good (green) for recoveries,
// Warning (orange) for warnings and Accent for test messages.
func color(a channel.Alert) string {
	return map[string]string{
		channel.SeverityInfo:     "Accent",
		channel.SeverityRecovery: "Good",
		channel.SeverityWarning:  "Warning",
		channel.SeverityFailure:  "Attention",
	}[a.Severity()]
}
