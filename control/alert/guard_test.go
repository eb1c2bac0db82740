package alert

import (
	"strings"
	"testing"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/webhook"
)

// TestPrivateReceiverRefused: with the channels' default client (lookout
// control without --allow-private-targets), a webhook whose receiver is
// on loopback, by address or by a name that resolves to it, is refused at
// the dial: given up after one attempt, not retried, its error beginning
// "target not allowed:", and the receiver sees nothing.
func TestPrivateReceiverRefused(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	port := r.srv.URL[strings.LastIndex(r.srv.URL, ":"):]
	e.defaultChannel("by-address", webhook.Type, []byte(`{"url":"`+r.srv.URL+`/hook","secret":"`+secret+`"}`))
	e.defaultChannel("by-name", webhook.Type, []byte(`{"url":"http://localhost`+port+`/hook","secret":"`+secret+`"}`))
	e.defaultChannel("by-api-url", webhook.Type, []byte(`{"url":"https://hooks.example.com/x","api_url":"http://[::ffff:127.0.0.1]`+port+`","secret":"`+secret+`"}`))
	a := e.fail("backup")
	registry := channel.NewRegistry(map[string]channel.Factory{webhook.Type: webhook.New}, channel.Deps{})
	e.start(DispatcherOptions{Channels: ChannelsFunc(registry.New)})
	e.waitFor("the outbox to empty", e.noPending)
	for _, ref := range []string{"chan:by-address", "chan:by-name", "chan:by-api-url"} {
		d := e.delivery(a.GetId(), ref)
		if !d.GetGivenUp() || d.GetDelivered() || d.GetAttempts() != 1 ||
			!strings.HasPrefix(d.GetLastError(), "target not allowed: ") || !strings.Contains(d.GetLastError(), "is a loopback address") {
			t.Errorf("%s: delivery %v", ref, d)
		}
	}
	if n := r.count(); n != 0 {
		t.Errorf("the receiver got %d requests", n)
	}
}
