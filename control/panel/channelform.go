package panel

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"lookout/control/admin"
)

// The channel form: one fieldset per channel type with that type's
// settings, instead of a raw JSON box. The browser shows the fieldset of
// the type selected (CSS :has; without it, every fieldset shows, each
// titled with its type). What is typed becomes the type's config, which
// the operator API's code checks; its refusals are shown next to the field
// they name.

// channelField is one setting of a channel type: config field Name.
type channelField struct {
	Name, Label, Help, Placeholder string
	// Kind is text, textarea or select (with Options).
	Kind    string
	Options []string
	// List: one value per line (or comma), sent as a JSON array.
	List bool
	// Number: sent as a JSON number when it is one (a Telegram chat id).
	Number bool
}

// channelType is a channel type and its settings, in the form's order.
type channelType struct {
	Name, Label string
	Fields      []channelField
}

// Key is the form field name of f of type t: "<type>.<field>".
func (t channelType) Key(f channelField) string { return t.Name + "." + f.Name }

// webhookURL is the setting of the chat channels whose webhook URL is
// itself the secret.
func webhookURL(example string) channelField {
	return channelField{Name: "webhook_url", Label: "Webhook URL", Kind: "text", Placeholder: example,
		Help: "Shown masked once saved; leave it as it is to keep it."}
}

// channelTypes are the forms of the channel types, by type.
var channelTypes = map[string]channelType{
	"email": {Name: "email", Label: "E-mail", Fields: []channelField{
		{Name: "to", Label: "Recipients", Kind: "textarea", List: true, Placeholder: "ops@example.com", Help: "One address per line, up to 50; sent through the operator's SMTP server."}}},
	"slack":   {Name: "slack", Label: "Slack", Fields: []channelField{webhookURL("https://hooks.slack.com/services/…")}},
	"discord": {Name: "discord", Label: "Discord", Fields: []channelField{webhookURL("https://discord.com/api/webhooks/…")}},
	"teams":   {Name: "teams", Label: "Microsoft Teams", Fields: []channelField{webhookURL("https://….logic.azure.com/workflows/…")}},
	"pagerduty": {Name: "pagerduty", Label: "PagerDuty", Fields: []channelField{
		{Name: "routing_key", Label: "Routing key", Kind: "text", Help: "The Events API v2 integration key. Shown masked once saved; leave it as it is to keep it."}}},
	"opsgenie": {Name: "opsgenie", Label: "Opsgenie", Fields: []channelField{
		{Name: "api_key", Label: "API key", Kind: "text", Help: "Shown masked once saved; leave it as it is to keep it."},
		{Name: "region", Label: "Region", Kind: "select", Options: []string{"us", "eu"}}}},
	"telegram": {Name: "telegram", Label: "Telegram", Fields: []channelField{
		{Name: "bot_token", Label: "Bot token", Kind: "text", Placeholder: "123456:ABC…", Help: "Shown masked once saved; leave it as it is to keep it."},
		{Name: "chat_id", Label: "Chat id", Kind: "text", Number: true, Placeholder: "-1001234567890 or @channel"}}},
	// A service URL of the shoutrrr library (ntfy, Gotify, Mattermost, ...),
	// when the node's registry has that type.
	"shoutrrr": {Name: "shoutrrr", Label: "Other service (shoutrrr URL)", Fields: []channelField{
		{Name: "url", Label: "Service URL", Kind: "text", Placeholder: "ntfy://ntfy.example.com/alerts",
			Help: "As shoutrrr documents it for ntfy, Gotify, Mattermost, Rocket.Chat, Pushover or generic. Shown masked once saved; leave it as it is to keep it."}}},
	"webhook": {Name: "webhook", Label: "Webhook", Fields: []channelField{
		{Name: "url", Label: "URL", Kind: "text", Placeholder: "https://example.com/hook"},
		{Name: "secret", Label: "Signing secret", Kind: "text", Placeholder: "whsec_…",
			Help: "Leave it empty to have one made (shown once). Shown masked once saved; leave it as it is to keep it."}}},
}

// apiURL is the setting every type takes, under "Advanced".
var apiURL = channelField{Name: "api_url", Label: "API address", Kind: "text", Placeholder: "https://proxy.example.com",
	Help: "Replaces the receiver's public address (scheme, host and port): for proxies, self-hosted receivers and tests."}

// channelForm is the form of one channel: what it holds and what was
// refused, by field.
type channelForm struct {
	// Action is where the form posts; Submit labels its button.
	Action, Submit string
	CSRF           string
	Types          []channelType
	APIURL         channelField
	Type, Name     string
	Default        bool
	// Values are the settings by Key ("<type>.<field>").
	Values map[string]string
	// Errors are the refusals by form field: "name", "type", a Key; ""
	// is about the whole form.
	Errors map[string]string
}

// newChannelForm is an empty form of the registry's types.
func newChannelForm(types []string, action, submit string) *channelForm {
	f := &channelForm{Action: action, Submit: submit, APIURL: apiURL, Type: "slack", Default: true, Values: map[string]string{}, Errors: map[string]string{}}
	for _, t := range types {
		if ct, ok := channelTypes[t]; ok {
			f.Types = append(f.Types, ct)
		}
	}
	return f
}

// readChannelForm reads a posted channel form into f.
func (f *channelForm) read(r *http.Request) {
	f.Type, f.Name = r.PostFormValue("type"), strings.TrimSpace(r.PostFormValue("name"))
	f.Default = r.PostFormValue("default") == "on"
	for _, t := range f.Types {
		for _, fd := range append(t.Fields, apiURL) {
			f.Values[t.Key(fd)] = strings.TrimSpace(r.PostFormValue(t.Key(fd)))
		}
	}
}

// fill sets f from a stored channel (its secret masked).
func (f *channelForm) fill(c *admin.Channel) {
	f.Type, f.Name, f.Default = c.Type, c.Name, c.Default
	var cfg map[string]json.RawMessage
	if json.Unmarshal(c.Config, &cfg) != nil {
		return
	}
	t := channelTypes[c.Type]
	for _, fd := range append(t.Fields, apiURL) {
		raw, ok := cfg[fd.Name]
		if !ok {
			continue
		}
		var s string
		var list []string
		switch {
		case json.Unmarshal(raw, &s) == nil:
			f.Values[t.Key(fd)] = s
		case json.Unmarshal(raw, &list) == nil:
			f.Values[t.Key(fd)] = strings.Join(list, "\n")
		default:
			f.Values[t.Key(fd)] = string(raw) // a number: a Telegram chat id
		}
	}
}

// config is the config the form's type and settings make: the fields
// left empty are left out, so the type's rules say what is missing.
func (f *channelForm) config() (json.RawMessage, error) {
	t, ok := channelTypes[f.Type]
	if !ok {
		return json.RawMessage("{}"), nil // the type's refusal says why
	}
	cfg := map[string]any{}
	for _, fd := range append(t.Fields, apiURL) {
		v := f.Values[t.Key(fd)]
		switch {
		case v == "":
		case fd.List:
			items := []string{}
			for _, s := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == ',' }) {
				if s = strings.TrimSpace(s); s != "" {
					items = append(items, s)
				}
			}
			cfg[fd.Name] = items
		case fd.Number:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				cfg[fd.Name] = n
			} else {
				cfg[fd.Name] = v
			}
		default:
			cfg[fd.Name] = v
		}
	}
	return marshalConfig(cfg)
}

// marshalConfig is cfg as JSON, without HTML escapes (URLs keep their &).
func marshalConfig(cfg map[string]any) (json.RawMessage, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	return json.RawMessage(strings.TrimSpace(b.String())), nil
}

// request is the form as the operator API's Go call takes it.
func (f *channelForm) request() (admin.ChannelRequest, error) {
	cfg, err := f.config()
	return admin.ChannelRequest{Type: f.Type, Name: f.Name, Config: cfg, Default: f.Default}, err
}

// invalidFieldRe splits the operator API's "invalid field: <path>:
// <reason>".
var invalidFieldRe = regexp.MustCompile(`^invalid field: ([^:]+)(?:: (.*))?$`)

// fieldRefusal splits the operator API's refusal err: the field it names
// ("" when none) and the reason for people ("Must be ..."); msg is the
// whole of it. ok is false when err is no refusal (the cluster's error).
func fieldRefusal(err error) (path, reason, msg string, ok bool) {
	if msg, ok = refusal(err); !ok {
		return "", "", "", false
	}
	var e *admin.Error
	errors.As(err, &e)
	m := invalidFieldRe.FindStringSubmatch(e.Message)
	if m == nil {
		return "", msg, msg, true
	}
	path, reason = m[1], m[2]
	if reason == "" {
		reason = "invalid"
	}
	return path, strings.ToUpper(reason[:1]) + reason[1:] + ".", msg, true
}

// refuse puts the operator API's refusal err next to the field it names
// and reports whether it was a refusal (else it is the cluster's error).
func (f *channelForm) refuse(err error) bool {
	path, reason, msg, ok := fieldRefusal(err)
	if !ok {
		return false
	}
	switch {
	case path == "name" || path == "type":
		f.Errors[path] = reason
	case strings.HasPrefix(path, "config."):
		field := strings.TrimPrefix(path, "config.")
		field, _, _ = strings.Cut(field, "[") // to[2] is the recipients' box
		if !f.hasField(field) {
			f.Errors[""] = msg
			break
		}
		f.Errors[f.Type+"."+field] = reason
	default:
		f.Errors[""] = msg
	}
	return true
}

// hasField tells whether the form shows config field name of its type.
func (f *channelForm) hasField(name string) bool {
	for _, fd := range append(channelTypes[f.Type].Fields, apiURL) {
		if fd.Name == name {
			return true
		}
	}
	return false
}
