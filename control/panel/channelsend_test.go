package panel_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestChannelTestShowsNoAnswer: a test send the receiver refuses shows
// its status and no part of its answer, which may be an internal
// service's.
func TestChannelTestShowsNoAnswer(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal secrets"))
	}))
	defer receiver.Close()
	b := n.browser()
	b.signIn(a)
	b.get("/channels")
	b.post("/channels", url.Values{"type": {"webhook"}, "name": {"ops hook"}, "webhook.url": {receiver.URL}}).
		want(t, http.StatusCreated, "Channel ops hook created.")
	chans, _ := n.Store.Channels(a.ID)
	p := b.post("/channels/"+chans[0].GetId()+"/test", nil)
	p.want(t, http.StatusBadGateway, "Test message not delivered: webhook: receiver answered 500 Internal Server Error")
	if strings.Contains(p.Body, "internal secrets") {
		t.Fatalf("the page shows the receiver's answer:\n%s", p.Body)
	}
}
