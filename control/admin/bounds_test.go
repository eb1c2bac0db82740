package admin_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"lookout/control/state"
)

// TestGroupAndChannelBounds: what an operator sends flows into one raft
// command; a group of too many channels is 400, a group or channel too
// large for one command 413 request_too_large, and an account's channel
// past state.MaxAccountChannels 409 channel_limit_reached, each before
// anything is stored.
func TestGroupAndChannelBounds(t *testing.T) {
	srv := newChannelServer(t)
	acct := mustCreateAccount(t, srv, "ops@example.com")
	groups := "/admin/v1/accounts/" + acct.ID + "/notification-groups"
	channels := "/admin/v1/accounts/" + acct.ID + "/channels"
	webhook := func(pad int) string {
		return fmt.Sprintf(`{"type":"webhook","config":{"url":"https://example.com/hook","secret":"whsec_%s"}}`, strings.Repeat("QUFB", pad/4+1))
	}
	list := func(n, pad int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = webhook(pad)
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	applied := srv.Store.AppliedIndex()
	do(t, srv, "POST", groups, `{"name":"many","channels":`+list(state.MaxGroupChannels+1, 1)+`}`).
		wantError(t, http.StatusBadRequest, "invalid_request", "invalid field: channels")
	do(t, srv, "POST", groups, `{"name":"big","channels":`+list(2, state.MaxCommandBytes/2)+`}`).
		wantError(t, http.StatusRequestEntityTooLarge, "request_too_large", "the notification group is too large")
	do(t, srv, "POST", channels, `{"name":"big",`+webhook(state.MaxCommandBytes)[1:]).
		wantError(t, http.StatusRequestEntityTooLarge, "request_too_large", "the channel is too large")
	if srv.Store.AppliedIndex() != applied {
		t.Fatal("a refused request wrote")
	}
	do(t, srv, "POST", groups, `{"name":"most","channels":`+list(state.MaxGroupChannels, 1)+`}`).wantStatus(t, http.StatusCreated)
	for i := range state.MaxAccountChannels {
		do(t, srv, "POST", channels, fmt.Sprintf(`{"name":"c%d",`, i)+webhook(1)[1:]).wantStatus(t, http.StatusCreated)
	}
	do(t, srv, "POST", channels, `{"name":"one more",`+webhook(1)[1:]).
		wantError(t, http.StatusConflict, "channel_limit_reached", "the account has")
}
