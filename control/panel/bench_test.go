package panel_test

import (
	"fmt"
	"net/http"
	"testing"

	"lookout/control/admin"
)

// BenchmarkPages renders the list of an account with 1,000 ping
// monitors, and a monitor's page with its 100 newest events, over HTTP on
// loopback (go test -run '^$' -bench . ./control/panel/).
func BenchmarkPages(b *testing.B) {
	n := newNode(b)
	rate, burst, limit, creations := 100000.0, int64(100000), int64(2000), int64(2000)
	a := n.signUp("bench@example.com", &admin.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst, MonitorLimit: &limit, MonitorsCreatedPerMinute: &creations})
	for i := range 1000 {
		n.ping(a, fmt.Sprintf(`{"event_type":"ping","monitor":"job-%04d","status":"complete","duration":1.5}`, i))
	}
	for range 120 {
		n.ping(a, `{"event_type":"ping","monitor":"job-0000","status":"complete","duration":2}`)
	}
	id := n.monitorUUID(a, "job-0000")
	br := n.browser()
	br.signIn(a)
	for _, tc := range []struct{ name, path string }{{"list-1000", "/"}, {"monitor-100-events", "/monitors/" + id}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if p := br.get(tc.path); p.Status != http.StatusOK {
					b.Fatal(p.Status)
				}
			}
		})
	}
}
