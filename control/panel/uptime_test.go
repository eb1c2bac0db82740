package panel_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"
)

// uptimeCell is the list's uptime cell of a monitor's row.
func uptimeCell(t *testing.T, body, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)data-name="` + name + `".*?<td data-label="Uptime 24h · 7d · 30d" class="uptime">(.*?)</td>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no uptime cell for %s in %s", name, body)
	}
	return m[1]
}

func TestUptimeOnTheListAndTheMonitorPage(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	// backup: up, failed 18 hours later, up again 6 hours after that, for
	// 12 hours now: 6 h down of the last 24 h (75%) and of its 36 h in all
	// (83.33%; the 7 and 30 days before it existed do not count).
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	n.advance(18 * time.Hour)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"fail"}`)
	n.advance(6 * time.Hour)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	n.advance(12 * time.Hour)
	// fresh: never pinged (new): nothing counts.
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"fresh","timeout_seconds":60}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}

	b := n.browser()
	b.signIn(a)
	p := b.get("/")
	p.want(t, http.StatusOK, "Uptime 24h · 7d · 30d")
	// (The test's own time, a few ms, does not show in two decimals.)
	if got, want := uptimeCell(t, p.Body, "backup"), `<span title="the last 24 hours"><b>75%</b></span> · <span title="the last 7 days">83.33%</span> · <span title="the last 30 days">83.33%</span>`; got != want {
		t.Fatalf("backup's uptime: %s, want %s", got, want)
	}
	if got := uptimeCell(t, p.Body, "fresh"); got != `<span title="the last 24 hours"><b>–</b></span> · <span title="the last 7 days">–</span> · <span title="the last 30 days">–</span>` {
		t.Fatalf("fresh's uptime: %s", got)
	}
	b.get("/monitors/"+n.monitorUUID(a, "backup")).want(t, http.StatusOK,
		`<p class="uptime" id="uptime">Uptime <span title="the last 24 hours"><b>75%</b></span> · <span title="the last 7 days">83.33%</span> · <span title="the last 30 days">83.33%</span>`)
}
