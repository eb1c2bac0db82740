// Package slack is the Slack channel: it posts alerts to a Slack
// incoming webhook (https://api.slack.com/messaging/webhooks) as a
// message with Block Kit blocks and a plain-text fallback.
//
// Config: {"webhook_url": "https://hooks.slack.com/services/...",
// "api_url": "..."}. webhook_url is required, an absolute http(s) URL
// (any host, so Slack-compatible receivers work too). api_url is
// optional and replaces the scheme and host of webhook_url
// (channel.Endpoint).
package slack

import (
	"encoding/json"
	"fmt"
	"strings"

	"lookout/control/alert/channel"
)

// Type is the channel type in configs and the registry.
const Type = "slack"

// Secret is the config field that is a secret (the webhook URL is itself the secret): the APIs
// never show it back in full.
const Secret = "webhook_url"

// Slack's limits, in characters.
const (
	maxHeader = 150
	maxField  = 2000
	maxText   = 3000
)

// New makes a Slack channel from its config; it is a channel.Factory.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	return channel.ChatWebhook(Type, func(a channel.Alert) any { return build(a) })(raw, deps)
}

// message is an incoming-webhook message.
type message struct {
	Text   string  `json:"text"`
	Blocks []block `json:"blocks"`
}

// block is a Block Kit layout block; Elements holds text objects
// (context) or buttons (actions).
type block struct {
	Type     string `json:"type"`
	Text     *text  `json:"text,omitempty"`
	Fields   []text `json:"fields,omitempty"`
	Elements []any  `json:"elements,omitempty"`
}

type text struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	Emoji bool   `json:"emoji,omitempty"`
}

type button struct {
	Type  string `json:"type"`
	Text  text   `json:"text"`
	URL   string `json:"url"`
	Style string `json:"style,omitempty"`
}

// build returns the Slack message for a: a header with the title, a
// section of fields (monitor, project, alert type, host, exit code,
// duration), the event's message as a code block, a context line with
// the time (shown in each reader's time zone) and a button to the
// monitor in the panel. text, the fallback for notifications, is the
// title.
func build(a channel.Alert) message {
	blocks := []block{{
		Type: "header",
		Text: &text{Type: "plain_text", Text: channel.Fit(emoji(a)+" "+a.Summary(), maxHeader, nil), Emoji: true},
	}}
	var fields []text
	for _, f := range channel.Facts(a) {
		fields = append(fields, mrkdwn(channel.Fit(f.Value, maxField, func(s string) string {
			return "*" + f.Name + "*\n" + escape(s)
		})))
	}
	blocks = append(blocks, block{Type: "section", Fields: fields})
	if msg := channel.Message(a); msg != "" {
		t := mrkdwn(channel.Fit(msg, maxText, codeBlock))
		blocks = append(blocks, block{Type: "section", Text: &t})
	}
	when := a.OccurredAt.UTC()
	blocks = append(blocks, block{Type: "context", Elements: []any{mrkdwn(fmt.Sprintf(
		"Lookout · <!date^%d^{date_short_pretty} at {time_secs}|%s>", when.Unix(), when.Format("2006-01-02 15:04:05 UTC")))}})
	if a.PanelURL != "" {
		blocks = append(blocks, block{Type: "actions", Elements: []any{button{
			Type: "button", Text: text{Type: "plain_text", Text: "Open in Lookout"}, URL: a.PanelURL,
		}}})
	}
	return message{Text: escape(a.Summary()), Blocks: blocks}
}

func mrkdwn(s string) text { return text{Type: "mrkdwn", Text: s} }

// emoji marks the header: red for failures, green for recoveries,
// orange for warnings, blue for test messages.
func emoji(a channel.Alert) string {
	return map[string]string{
		channel.SeverityInfo:     ":large_blue_circle:",
		channel.SeverityRecovery: ":large_green_circle:",
		channel.SeverityWarning:  ":large_orange_circle:",
		channel.SeverityFailure:  ":red_circle:",
	}[a.Severity()]
}

// escape escapes the three characters Slack's mrkdwn requires
// (https://api.slack.com/reference/surfaces/formatting#escaping).
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// codeBlock puts s in a preformatted block; a ``` inside s, which would
// end the block, is broken with a zero-width space.
func codeBlock(s string) string {
	return "```\n" + escape(strings.ReplaceAll(s, "```", "``\u200b`")) + "\n```"
}
