package alert

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lookout/control/alert/channel/webhook"
	"lookout/internal/metrics"
	"lookout/internal/probe/probetest"
)

// TestHungAccountDoesNotDelayAnothersAlerts: account acct-1 has 10
// default webhook channels at a listener that accepts and never answers,
// and 6 failing monitors (60 deliveries, more than the 16 slots at 2 per
// channel). They hold at most the account's share of the slots (8 by
// default), and another account's alert is delivered while every one of
// them still hangs; the rest wait in the outbox, counted.
func TestHungAccountDoesNotDelayAnothersAlerts(t *testing.T) {
	e := newEnv(t)
	const other = "acct-2"
	e.account(other)
	silent := probetest.NewSilent(t)
	for i := range 10 {
		e.defaultChannel(fmt.Sprint("dead-", i), webhook.Type, []byte(`{"url":"`+silent.URL+`","secret":"`+secret+`"}`))
	}
	ok := newReceiver(t)
	e.defaultChannelOf(other, "ok", webhook.Type, ok.config())
	e.failMany("job", 6)
	reg := prometheus.NewRegistry()
	e.start(DispatcherOptions{SendTimeout: time.Hour, Metrics: metrics.NewControl(reg).Alerts})
	e.waitFor("acct-1's deliveries to hang", func() bool { held, _ := silent.Held(); return held >= 8 })

	a := e.failIn(other, "backup")
	e.waitFor("acct-2's alert", func() bool { return ok.count() == 1 })
	if got := ok.ids(); got[0] != a.GetId() {
		t.Fatalf("acct-2's receiver got %v, want %s", got, a.GetId())
	}
	held, accepted := silent.Held()
	if held != 8 || accepted != 8 {
		t.Errorf("acct-1's deliveries hold %d connections (%d made), want its share: 8", held, accepted)
	}
	// The other 52 wait in the outbox for acct-1's share.
	want := `
# HELP lookout_alert_deliveries_waiting_for_share Due alert deliveries the last read of the outbox on this node, as leader, left because their account has its share of the delivery slots under way (--account-alert-share).
# TYPE lookout_alert_deliveries_waiting_for_share gauge
lookout_alert_deliveries_waiting_for_share 52
`
	e.waitFor("the gauge of deliveries waiting for their share", func() bool {
		return testutil.GatherAndCompare(reg, strings.NewReader(want), "lookout_alert_deliveries_waiting_for_share") == nil
	})
}
