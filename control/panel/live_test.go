package panel_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lookout/control/panel"
	"lookout/internal/metrics"
)

// status requests path as b and answers the status, closing the answer
// at once (a stream ends with it).
func (b *browser) status(path string) int {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.n.URL+path, nil)
	c := *b.c
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestLiveStreamsPerAccountShare: one account holds at most its share of
// the node's live streams (a tenth of the cap: 2 of 20 here); beyond it
// gets 503 while another account still gets its stream, and a stream
// closed frees its place.
func TestLiveStreamsPerAccountShare(t *testing.T) {
	reg := prometheus.NewRegistry()
	n := newNode(t, func(o *panel.Options) { o.MaxStreams, o.Metrics = 20, metrics.NewControl(reg).Panel })
	a, other := n.signUp("a@example.com", nil), n.signUp("b@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"run"}`)
	id := n.monitorUUID(a, "backup")
	ba, bb := n.browser(), n.browser()
	ba.signIn(a)
	bb.signIn(other)

	first := ba.stream("/live", "")
	ba.stream("/monitors/"+id+"/live", "")
	ba.get("/live").want(t, http.StatusServiceUnavailable, "too many live streams for this account")
	bb.stream("/live", "")
	want := `
# HELP lookout_panel_live_streams Live streams (Server-Sent Events) this node serves now.
# TYPE lookout_panel_live_streams gauge
lookout_panel_live_streams 3
# HELP lookout_panel_live_streams_refused_total Live streams this node answered 503, by limit: node (its cap) or account (one account's share of it).
# TYPE lookout_panel_live_streams_refused_total counter
lookout_panel_live_streams_refused_total{limit="account"} 1
lookout_panel_live_streams_refused_total{limit="node"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lookout_panel_live_streams", "lookout_panel_live_streams_refused_total"); err != nil {
		t.Error(err)
	}

	first.resp.Body.Close()
	for end := time.Now().Add(10 * time.Second); ba.status("/live") != http.StatusOK; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("a closed stream did not free the account's place")
		}
	}
}
