// Package telegram sends alerts as Telegram messages through a bot
// (https://core.telegram.org/bots/api#sendmessage).
//
// Config: {"bot_token": "123456:ABC...", "chat_id": "-100123" | -100123 |
// "@channel", "api_url": "..."}; api_url is optional and replaces
// https://api.telegram.org. The message is HTML (parse_mode "HTML") with
// every value escaped, and ends with a link to the panel.
package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"lookout/control/alert/channel"
)

// Type is the channel type in channel objects.
const Type = "telegram"

// Secret is the config field that is a secret (the bot token): the APIs
// never show it back in full.
const Secret = "bot_token"

// DefaultAPIURL is Telegram's Bot API address.
const DefaultAPIURL = "https://api.telegram.org"

// maxMessage bounds the event message quoted, in characters, so the text
// stays under Telegram's 4096 after escaping.
const maxMessage = 2000

var (
	tokenRE  = regexp.MustCompile(`^[0-9]+:[A-Za-z0-9_-]+$`)
	chatIDRE = regexp.MustCompile(`^(-?[0-9]+|@[A-Za-z][A-Za-z0-9_]{3,31})$`)
)

type config struct {
	BotToken string          `json:"bot_token"`
	ChatID   json.RawMessage `json:"chat_id"`
	APIURL   string          `json:"api_url"`
}

// Channel sends to one Telegram chat.
type Channel struct {
	chatID   string
	endpoint string
	http     *http.Client
}

// New makes a Telegram channel from its config. chat_id may be a number
// or a string (a numeric id or an @channel username).
func New(raw json.RawMessage, deps channel.Deps) (channel.Channel, error) {
	var cfg config
	if err := channel.DecodeConfig(raw, &cfg); err != nil {
		return nil, err
	}
	if cfg.BotToken == "" {
		return nil, channel.FieldError("bot_token", "is required")
	}
	if !tokenRE.MatchString(cfg.BotToken) {
		return nil, channel.FieldError("bot_token", `must look like "123456:ABC-DEF..."`)
	}
	chatID, err := parseChatID(cfg.ChatID)
	if err != nil {
		return nil, err
	}
	base, err := channel.BaseURL(cfg.APIURL, DefaultAPIURL)
	if err != nil {
		return nil, err
	}
	return &Channel{chatID: chatID, endpoint: base + "/bot" + cfg.BotToken + "/sendMessage", http: channel.Client(deps.HTTP)}, nil
}

// parseChatID accepts a JSON number or string and returns it as a
// string, which Telegram takes for both.
func parseChatID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", channel.FieldError("chat_id", "is required")
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return "", channel.FieldError("chat_id", "must be a number or a string")
		}
		id = n.String()
	}
	if !chatIDRE.MatchString(id) {
		return "", channel.FieldError("chat_id", "must be a numeric chat id or an @channel username")
	}
	return id, nil
}

type message struct {
	ChatID                string `json:"chat_id"`
	Text                  string `json:"text"`
	ParseMode             string `json:"parse_mode"`
	DisableWebPagePreview bool   `json:"disable_web_page_preview"`
}

// Send posts the alert to the chat.
func (c *Channel) Send(ctx context.Context, a channel.Alert) error {
	m := message{ChatID: c.chatID, Text: text(a), ParseMode: "HTML", DisableWebPagePreview: true}
	if err := channel.PostJSON(ctx, c.http, c.endpoint, m, nil); err != nil {
		return fmt.Errorf("%s: %w", Type, err)
	}
	return nil
}

// text is the message in Telegram's HTML subset: a bold title, the
// monitor, its project, the event's message as preformatted text and the
// panel link.
func text(a channel.Alert) string {
	esc := html.EscapeString
	var b strings.Builder
	b.WriteString(icon(a) + " <b>" + esc(a.Summary()) + "</b>\n")
	b.WriteString("\nMonitor: <code>" + esc(a.Monitor.Name) + "</code>")
	if a.Monitor.DisplayName != "" {
		b.WriteString("\nName: " + esc(a.Monitor.DisplayName))
	}
	if a.Monitor.Project != "" {
		b.WriteString("\nProject: " + esc(a.Monitor.Project))
	}
	if ev := a.Event; ev != nil {
		if ev.Host != "" {
			b.WriteString("\nHost: " + esc(ev.Host))
		}
		if ev.ExitCode != nil {
			b.WriteString("\nExit code: " + strconv.FormatInt(*ev.ExitCode, 10))
		}
		if ev.Message != "" {
			b.WriteString("\n<pre>" + esc(truncate(ev.Message, maxMessage)) + "</pre>")
		}
	}
	if a.PanelURL != "" {
		b.WriteString("\n<a href=\"" + esc(a.PanelURL) + "\">Open in Lookout</a>")
	}
	return b.String()
}

// icon marks the kind of alert at a glance.
func icon(a channel.Alert) string {
	return map[string]string{
		channel.SeverityInfo:     "🔔",
		channel.SeverityRecovery: "✅",
		channel.SeverityWarning:  "⚠️",
		channel.SeverityFailure:  "🔴",
	}[a.Severity()]
}

// truncate cuts s to at most n characters, ending it with an ellipsis
// when cut.
func truncate(s string, n int) string { return channel.Fit(s, n, nil) }
