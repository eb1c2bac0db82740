package panel_test

import (
	"net/http"
	"net/url"
	"testing"
)

// TestPauseAndResumeButtons: the monitor page pauses a monitor for a time
// with a reason (shown, state paused), resumes it; a bad length or reason
// is refused; another account's monitor is a 404.
func TestPauseAndResumeButtons(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	id := n.monitorUUID(a, "backup")
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/"+id).want(t, http.StatusOK, `action="/monitors/`+id+`/pause"`)

	b.post("/monitors/"+id+"/pause", url.Values{"for": {"3h"}}).want(t, http.StatusUnprocessableEntity, "Pause for 1 hour")
	b.post("/monitors/"+id+"/pause", url.Values{"for": {"1h"}, "reason": {"bad\x00reason"}}).want(t, http.StatusUnprocessableEntity, "The reason")
	other := n.signUp("other@example.com", nil)
	ob := n.browser()
	ob.signIn(other)
	ob.post("/monitors/"+id+"/pause", url.Values{"for": {"1h"}}).want(t, http.StatusNotFound)

	p := b.post("/monitors/"+id+"/pause", url.Values{"for": {"4h"}, "reason": {"moving the database"}})
	if p.Status != http.StatusSeeOther || p.Location != "/monitors/"+id {
		t.Fatalf("pause: %d %q", p.Status, p.Location)
	}
	m, err := n.Store.Monitor(a.ID, id)
	if err != nil || !m.GetQuiet().GetPaused() || m.GetQuiet().GetPausedUntilUnixMs() == 0 {
		t.Fatalf("stored: %v %v", m.GetQuiet(), err)
	}
	b.get("/monitors/"+id).want(t, http.StatusOK, "<b>Paused</b> until", "moving the database", `action="/monitors/`+id+`/resume"`, ">paused<")
	if p := b.post("/monitors/"+id+"/resume", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("resume: %d", p.Status)
	}
	if m, _ := n.Store.Monitor(a.ID, id); m.GetQuiet().GetPaused() {
		t.Fatal("still paused")
	}
}
