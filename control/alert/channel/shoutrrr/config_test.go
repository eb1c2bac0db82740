package shoutrrr_test

import (
	"encoding/json"
	"strings"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/shoutrrr"
)

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		config string
		field  string // "": valid
		reason string // part of the error
	}{
		{`{"url": "ntfy://ntfy.sh/alerts"}`, "", ""},
		{`{"url": "ntfy://user:pass@ntfy.example.com/alerts?priority=high&tags=warning"}`, "", ""},
		{`{"url": "NTFY://ntfy.sh/alerts"}`, "", ""},
		{`{"url": "gotify://gotify.example.com/path/AAAAAAAAAAAAAAA"}`, "", ""},
		{`{"url": "mattermost://mattermost.example.com/token/channel"}`, "", ""},
		{`{"url": "rocketchat://rocket.example.com/tokenA/tokenB/alerts"}`, "", ""},
		{`{"url": "pushover://shoutrrr:apptoken@userkey/?devices=phone"}`, "", ""},
		{`{"url": "generic://hooks.example.com/lookout"}`, "", ""},
		{`{"url": "generic+https://hooks.example.com/lookout?template=json&@Authorization=x"}`, "", ""},
		{`{"url": "ntfy://ntfy.sh/alerts", "api_url": "https://ignored.example.com"}`, "", ""},
		{`{}`, "url", "is required"},
		{`null`, "url", "is required"},
		{`{"url": ""}`, "url", "is required"},
		{`{"url": 5}`, "url", "must be a JSON string"},
		{`{"url": "ntfy://ntfy.sh/alerts", "token": "x"}`, "token", "unknown field"},
		{`{"URL": "ntfy://ntfy.sh/alerts"}`, "URL", "unknown field"},
		{`{"url": "not a url"}`, "url", "shoutrrr service URL"},
		{`{"url": "ntfy:alerts"}`, "url", "shoutrrr service URL"},
		{`{"url": "https://hooks.example.com/x"}`, "url", `service "https" is not supported; supported: generic, gotify, mattermost, ntfy, pushover, rocketchat`},
		{`{"url": "telegram://123:token@telegram?chats=1"}`, "url", `"telegram" is not supported`},
		{`{"url": "matrix://user:pass@matrix.example.com"}`, "url", `"matrix" is not supported`},
		{`{"url": "smtp://user:pass@smtp.example.com:587/?to=a@example.com"}`, "url", `"smtp" is not supported`},
		{`{"url": "logger://"}`, "url", `"logger" is not supported`},
		{`{"url": "ntfy+https://ntfy.sh/alerts"}`, "url", "ntfy takes no ntfy+ URL"},
		{`{"url": "ntfy://ntfy.sh"}`, "url", "topic"},
		{`{"url": "gotify://gotify.example.com/n0t-a-t0ken"}`, "url", "15 characters"},
		{`{"url": "rocketchat://rocket.example.com"}`, "url", ""},
		{`{"url": "ntfy://ntfy.sh/` + strings.Repeat("a", 4096) + `"}`, "url", "at most 4096 bytes"},
	} {
		_, err := shoutrrr.New(json.RawMessage(tc.config), channel.Deps{})
		if tc.field == "" {
			if err != nil {
				t.Errorf("New(%s): %v", tc.config, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("New(%s) succeeded, want an error about %s", tc.config, tc.field)
			continue
		}
		channeltest.CheckConfigError(t, err, tc.field)
		if !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("New(%s) = %v, want it to say %s", tc.config, err, tc.reason)
		}
	}
}

// TestErrorsHideSecrets: a URL the library refuses is named, but the
// error quotes none of its secret parts.
func TestErrorsHideSecrets(t *testing.T) {
	for _, u := range []string{
		"ntfy://user:s3cretpass@ntfy.example.com/alerts?priority=s3cretvalue",
		"ntfy://ntfy.example.com/alerts?nonsense=s3cretvalue",
		"generic+https://hooks.example.com/s3cretpath?template=json&contenttype=application/json&disabletls=s3cretvalue",
	} {
		raw, _ := json.Marshal(map[string]string{"url": u})
		_, err := shoutrrr.New(raw, channel.Deps{})
		if err == nil {
			t.Errorf("New(%s) succeeded", u)
			continue
		}
		channeltest.CheckConfigError(t, err, "url")
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("New(%s) = %q quotes a secret", u, err)
		}
	}
}
