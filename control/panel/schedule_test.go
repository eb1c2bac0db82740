package panel_test

import (
	"net/http"
	"regexp"
	"testing"
)

// TestScheduledMonitorInThePanel: a ping monitor on a schedule shows the
// schedule and its zone in the list's next column and on its page, with
// the next runs as the zone's wall clock shows them; before its first
// ping the next column says when the first run is expected.
func TestScheduledMonitorInThePanel(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	if st, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"backup","timeout_seconds":600,"schedule":"30 2 * * *","timezone":"Europe/Berlin"}`); st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	b := n.browser()
	b.signIn(a)
	b.get("/").want(t, http.StatusOK, `<code>30 2 * * *</code> Europe/Berlin`, `title="first run expected: `)
	p := b.get("/monitors/" + n.monitorUUID(a, "backup"))
	p.want(t, http.StatusOK, "schedule <code>30 2 * * *</code> in Europe/Berlin", "Next runs by the schedule (Europe/Berlin): ", "first run expected")
	if runs := regexp.MustCompile(`[A-Z][a-z]{2} \d{1,2} [A-Z][a-z]{2} 0[23]:[03]0 CES?T`).FindAllString(p.Body, -1); len(runs) != 5 {
		t.Fatalf("next runs shown: %q", runs)
	}
}
