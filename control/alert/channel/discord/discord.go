// Package discord is the Discord channel: it posts alerts to a Discord
// webhook (https://discord.com/developers/docs/resources/webhook#execute-webhook)
// as a short content line and one embed.
//
// Config: {"webhook_url": "https://discord.com/api/webhooks/...",
// "api_url": "..."}. webhook_url is required, an absolute http(s) URL.
// api_url is optional and replaces the scheme and host of webhook_url
// (channel.Endpoint).
package discord

import (
	"encoding/json"
	"strings"
	"time"

	"lookout/control/alert/channel"
)

// Type is the channel type in configs and the registry.
const Type = "discord"

// Secret is the config field that is a secret (the webhook URL is itself the secret): the APIs
// never show it back in full.
const Secret = "webhook_url"

// Discord's limits, in characters. An embed may hold 6000 in all: the
// title, the description, six fields of at most 9+256 and the footer
// stay under that.
const (
	maxContent     = 2000
	maxTitle       = 256
	maxDescription = 4096
	maxField       = 256
)

// Embed colors.
const (
	red    = 0xED4245
	green  = 0x57F287
	orange = 0xE67E22
	blue   = 0x5865F2
)

// New makes a Discord channel from its config; it is a channel.Factory.
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	return channel.ChatWebhook(Type, func(a channel.Alert) any { return build(a) })(raw, deps)
}

type message struct {
	Content         string   `json:"content"`
	Embeds          []embed  `json:"embeds"`
	AllowedMentions mentions `json:"allowed_mentions"`
}

// mentions with an empty Parse keeps a name like "@everyone" from
// pinging anyone.
type mentions struct {
	Parse []string `json:"parse"`
}

type embed struct {
	Title       string  `json:"title"`
	Description string  `json:"description,omitempty"`
	URL         string  `json:"url,omitempty"`
	Color       int     `json:"color"`
	Timestamp   string  `json:"timestamp"`
	Fields      []field `json:"fields"`
	Footer      footer  `json:"footer"`
}

type field struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

type footer struct {
	Text string `json:"text"`
}

// build returns the Discord message for a: the title as content (what
// notifications show) and an embed with the title linking to the
// monitor in the panel, the event's message as a code block, a color
// by alert type, the time and inline fields (monitor, project, alert
// type, host, exit code, duration).
func build(a channel.Alert) message {
	e := embed{
		Title:     channel.Fit(a.Summary(), maxTitle, escape),
		URL:       a.PanelURL,
		Color:     color(a),
		Timestamp: a.OccurredAt.UTC().Format(time.RFC3339),
		Fields:    []field{},
		Footer:    footer{Text: "Lookout"},
	}
	if msg := channel.Message(a); msg != "" {
		e.Description = channel.Fit(msg, maxDescription, codeBlock)
	}
	for _, f := range channel.Facts(a) {
		e.Fields = append(e.Fields, field{Name: f.Name, Value: channel.Fit(f.Value, maxField, escape), Inline: true})
	}
	return message{
		Content:         channel.Fit(a.Summary(), maxContent, escape),
		Embeds:          []embed{e},
		AllowedMentions: mentions{Parse: []string{}},
	}
}

// color is red for failures, green for recoveries, orange for warnings
// and blue for test messages.
func color(a channel.Alert) int {
	return map[string]int{
		channel.SeverityInfo:     blue,
		channel.SeverityRecovery: green,
		channel.SeverityWarning:  orange,
		channel.SeverityFailure:  red,
	}[a.Severity()]
}

// escape keeps Discord markdown in names from formatting them: inline
// markers anywhere, and quote, heading and list markers at the start
// (names are one line).
func escape(s string) string {
	s = inline.Replace(s)
	if strings.HasPrefix(s, ">") || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "-") {
		s = `\` + s
	}
	return s
}

var inline = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`, "[", `\[`, "]", `\]`)

// codeBlock puts s in a preformatted block; a ``` inside s, which would
// end the block, is broken with a zero-width space.
func codeBlock(s string) string {
	return "```\n" + strings.ReplaceAll(s, "```", "``\u200b`") + "\n```"
}
