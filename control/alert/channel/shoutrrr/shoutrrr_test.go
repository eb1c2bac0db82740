package shoutrrr_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/shoutrrr"
	"lookout/internal/netguard"
)

func newChannel(t *testing.T, serviceURL string, client *http.Client) channel.Channel {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"url": serviceURL})
	c, err := shoutrrr.New(raw, channel.Deps{HTTP: client})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// host is the receiver's host:port.
func host(rx *channeltest.Receiver) string { return strings.TrimPrefix(rx.URL, "http://") }

// TestGenericDelivers sends through a generic+http URL to a receiver on
// loopback: the library's request (address, headers from @options, the
// body of the template) arrives, with the summary and the panel link.
func TestGenericDelivers(t *testing.T) {
	for _, tc := range []struct{ name, query string }{
		{"generic-text", "?@Authorization=Bearer+t0ken"},
		{"generic-json", "?template=json&$source=lookout&@XCustomHeader=1&messagekey=text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rx := channeltest.NewReceiver(t)
			c := newChannel(t, "generic+http://"+host(rx)+"/hooks/lookout"+tc.query, channeltest.HTTP())
			if err := c.Send(t.Context(), channeltest.Alert(channel.MonitorFailed)); err != nil {
				t.Fatal(err)
			}
			req := rx.Last(t)
			channeltest.Golden(t, tc.name+".txt", req.Dump("Content-Type", "Authorization", "X-Custom-Header", "User-Agent"))
			mustHold(t, string(req.Body), `Nightly <backup> & "restore" failed with exit code 2: pg_dump: error: <FATAL>`,
				"https://lookout.example.com/monitors/7c9e6679-7425-40de-944b-e07fc1f90ae7?tab=events&page=1")
		})
	}
}

// mustHold checks that body holds each of want, as is or as a JSON
// string holds it.
func mustHold(t *testing.T, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		quoted, _ := json.Marshal(w)
		if !strings.Contains(body, w) && !strings.Contains(body, strings.Trim(string(quoted), `"`)) {
			t.Errorf("body lacks %s:\n%s", w, body)
		}
	}
}

// loopback are the supported services that can be pointed at a receiver
// on loopback over plain HTTP, by scheme: the path after the host.
var loopback = map[string]string{
	"generic":    "generic+http://%s/hooks/lookout",
	"ntfy":       "ntfy://%s/lookout-alerts?scheme=http",
	"gotify":     "gotify://%s/AAAAAAAAAAAAAAA?disabletls=yes",
	"mattermost": "mattermost://%s/m4ttermost-token?disabletls=yes",
}

// TestServicesDeliver sends to each service's receiver on loopback and
// compares the request with its golden file.
func TestServicesDeliver(t *testing.T) {
	for scheme, pattern := range loopback {
		t.Run(scheme, func(t *testing.T) {
			rx := channeltest.NewReceiver(t)
			rx.Respond(http.StatusOK, `{"id": 1}`)
			c := newChannel(t, strings.Replace(pattern, "%s", host(rx), 1), channeltest.HTTP())
			if err := c.Send(t.Context(), channeltest.Alert(channel.CheckFailed)); err != nil {
				t.Fatal(err)
			}
			req := rx.Last(t)
			channeltest.Golden(t, scheme+".txt", req.Dump("Content-Type", "User-Agent"))
			mustHold(t, string(req.Body), "https://lookout.example.com/monitors/7c9e6679-7425-40de-944b-e07fc1f90ae7?tab=events&page=1")
		})
	}
}

// TestGuard: with the default client, which refuses loopback, no service
// reaches the receiver; the refusal is permanent.
func TestGuard(t *testing.T) {
	for scheme, pattern := range loopback {
		t.Run(scheme, func(t *testing.T) {
			rx := channeltest.NewReceiver(t)
			c := newChannel(t, strings.Replace(pattern, "%s", host(rx), 1), nil)
			err := c.Send(t.Context(), channeltest.Alert(channel.MonitorFailed))
			if !errors.Is(err, netguard.ErrNotAllowed) || !channel.IsPermanent(err) {
				t.Errorf("err = %v, want a permanent refusal", err)
			}
			if n := len(rx.Requests()); n != 0 {
				t.Errorf("the receiver got %d requests", n)
			}
		})
	}
	t.Run("rocketchat", func(t *testing.T) {
		// Rocket.Chat is always HTTPS: refused at the dial, before TLS.
		rx := channeltest.NewReceiver(t)
		c := newChannel(t, "rocketchat://"+host(rx)+"/tokenA/tokenB/alerts", nil)
		err := c.Send(t.Context(), channeltest.Alert(channel.MonitorFailed))
		if !errors.Is(err, netguard.ErrNotAllowed) || !channel.IsPermanent(err) {
			t.Errorf("err = %v, want a permanent refusal", err)
		}
	})
}

// TestEveryServiceUsesTheClient: every supported service sends through
// the client Lookout gives it (here a fake at the edge that answers
// without a network), so none can go around the guarded dialer.
func TestEveryServiceUsesTheClient(t *testing.T) {
	urls := map[string]string{
		"generic":    "generic://hooks.example.com/lookout",
		"ntfy":       "ntfy://ntfy.example.com/alerts",
		"gotify":     "gotify://gotify.example.com/AAAAAAAAAAAAAAA",
		"mattermost": "mattermost://mattermost.example.com/token",
		"rocketchat": "rocketchat://rocket.example.com/tokenA/tokenB/alerts",
		"pushover":   "pushover://shoutrrr:apptoken@userkey/?devices=phone",
	}
	if got := strings.Join(shoutrrr.Schemes(), ","); got != "generic,gotify,mattermost,ntfy,pushover,rocketchat" {
		t.Fatalf("schemes %s: each needs a case here", got)
	}
	for scheme, u := range urls {
		t.Run(scheme, func(t *testing.T) {
			fake := &fakeTransport{}
			c := newChannel(t, u, &http.Client{Transport: fake})
			if err := c.Send(t.Context(), channeltest.Alert(channel.MonitorFailed)); err != nil {
				t.Fatal(err)
			}
			if len(fake.requests) != 1 {
				t.Fatalf("%d requests through the client, want 1", len(fake.requests))
			}
			req := fake.requests[0]
			if req.Header.Get("User-Agent") != channel.UserAgent {
				t.Errorf("User-Agent %q", req.Header.Get("User-Agent"))
			}
			if !strings.Contains(fake.bodies[0], "failed") {
				t.Errorf("body lacks the summary: %s", fake.bodies[0])
			}
		})
	}
}

type fakeTransport struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
}

func (f *fakeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.bodies = append(f.bodies, string(body))
	f.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"id": 1}`)), Request: req}, nil
}

// TestDelivery checks how answers are classified, for each service on
// loopback: the same rules as every channel, whatever the library's own
// error says.
func TestDelivery(t *testing.T) {
	for scheme, pattern := range loopback {
		t.Run(scheme, func(t *testing.T) {
			rx := channeltest.NewReceiver(t)
			c := newChannel(t, strings.Replace(pattern, "%s", host(rx), 1), channeltest.HTTP())
			channeltest.CheckDelivery(t, rx, func(ctx context.Context) error {
				return c.Send(ctx, channeltest.Alert(channel.MonitorFailed))
			})
		})
	}
}
