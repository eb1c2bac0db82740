package panel_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestFormsRefuseNamesThatBreakTheRule: the panel's forms that name a
// key, a channel or a notification group (and its channels) refuse a name
// with a control character, a bidirectional override, nothing visible or
// bytes that are not UTF-8, beside the form, and store nothing.
func TestFormsRefuseNamesThatBreakTheRule(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	b.get("/keys")
	slack := "https://hooks.slack.com/services/T/B/X"
	for _, bad := range []struct{ name, value, why string }{
		{"ESC", "\x1b[31mred", "Name: must not contain control characters"},
		{"NUL", "a\x00b", "Name: must not contain control characters"},
		{"RTL override", "ops\u202egpj.exe", "Name: must not contain bidirectional"},
		{"zero-width only", "\u200b\u2060\ufeff", "Name: must not be blank"},
		{"not UTF-8", "ops\xff", "Name: must be valid UTF-8"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			b.post("/keys", url.Values{"type": {"ingest"}, "name": {bad.value}}).want(t, http.StatusBadRequest, bad.why)
			// The channel and group forms say it next to the name.
			why := strings.ToUpper(bad.why[6:7]) + bad.why[7:]
			b.post("/channels", url.Values{"type": {"slack"}, "name": {bad.value}, "slack.webhook_url": {slack}}).want(t, http.StatusBadRequest, why)
			b.post("/groups", url.Values{"name": {bad.value}}).want(t, http.StatusBadRequest, why)
		})
	}
	keys, _ := n.Store.Keys(a.ID)
	chans, _ := n.Store.Channels(a.ID)
	groups, _ := n.Store.NotificationGroups(a.ID)
	if len(keys) != 2 || len(chans) != 0 || len(groups) != 0 {
		t.Fatalf("refused names stored: %d keys, %d channels, %d groups", len(keys), len(chans), len(groups))
	}
}
