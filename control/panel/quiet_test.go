package panel_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"
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

// TestMaintenancePage: the page lists the account's windows, adds a
// one-off one (wall-clock times in the zone given) and a recurring one,
// refuses an end before the start with the API's message, and deletes;
// another account's window is a 404.
func TestMaintenancePage(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	id := n.monitorUUID(a, "backup")
	b := n.browser()
	b.signIn(a)
	b.get("/maintenance").want(t, http.StatusOK, "No maintenance windows", "ping backup")

	start := time.Now().Add(time.Hour).In(must(time.LoadLocation("Europe/Berlin")))
	form := url.Values{"name": {"database move"}, "kind": {"once"}, "zone": {"Europe/Berlin"},
		"starts": {start.Format("2006-01-02T15:04")}, "ends": {start.Add(-time.Minute).Format("2006-01-02T15:04")}, "monitor": {id}}
	b.post("/maintenance", form).want(t, http.StatusUnprocessableEntity, "ends_at must be after starts_at")
	form.Set("ends", start.Add(2*time.Hour).Format("2006-01-02T15:04"))
	if p := b.post("/maintenance", form); p.Status != http.StatusSeeOther {
		t.Fatalf("create: %d %s", p.Status, p.Body)
	}
	recurring := url.Values{"name": {"Tuesday patching"}, "kind": {"recurring"}, "zone": {"UTC"}, "schedule": {"0 2 * * 2"}, "hours": {"2"}, "tags": {"db, web"}}
	if p := b.post("/maintenance", recurring); p.Status != http.StatusSeeOther {
		t.Fatalf("create recurring: %d %s", p.Status, p.Body)
	}
	b.get("/monitors/"+id).want(t, http.StatusOK) // not in it yet
	ws, err := n.Store.MaintenanceWindows(a.ID)
	if err != nil || len(ws) != 2 {
		t.Fatalf("windows %v %v", ws, err)
	}
	page := b.get("/maintenance")
	page.want(t, http.StatusOK, "database move", "ping backup", "Tuesday patching", "tag db", "every 0 2 * * 2 (UTC) for 2h0m0s")
	for _, w := range ws {
		if w.GetName() == "database move" && w.GetStartsUnixMs() != start.Truncate(time.Minute).UnixMilli() {
			t.Fatalf("starts at %v, want %v", time.UnixMilli(w.GetStartsUnixMs()), start.Truncate(time.Minute))
		}
	}
	other := n.signUp("other@example.com", nil)
	ob := n.browser()
	ob.signIn(other)
	ob.post("/maintenance/"+ws[0].GetId()+"/delete", nil).want(t, http.StatusNotFound)
	if p := b.post("/maintenance/"+ws[0].GetId()+"/delete", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("delete: %d", p.Status)
	}
	if ws, _ := n.Store.MaintenanceWindows(a.ID); len(ws) != 1 {
		t.Fatalf("%d windows after the delete", len(ws))
	}
	// A window under way shows on the monitor's page.
	now := time.Now().UTC()
	if code, body := n.api(a, "POST", "/api/v1/maintenance-windows", `{"name":"now","starts_at":"`+now.Add(-time.Minute).Format(time.RFC3339)+
		`","ends_at":"`+now.Add(time.Hour).Format(time.RFC3339)+`"}`); code != http.StatusCreated {
		t.Fatalf("create through the API: %d %s", code, body)
	}
	b.get("/monitors/"+id).want(t, http.StatusOK, "<b>In maintenance</b> (now)")
}

// TestDependenciesOnTheMonitorPage: the page lists what a monitor depends
// on with each one's state, and says its alerts are held while one is
// down.
func TestDependenciesOnTheMonitorPage(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"db","status":"fail"}`)
	if code, body := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"app","timeout_seconds":60,
		"depends_on":[{"kind":"ping","name":"db"}]}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/"+n.monitorUUID(a, "app")).want(t, http.StatusOK, `Depends on <a href="/monitors/`+n.monitorUUID(a, "db")+`">ping db</a> <span class="pill red">down</span>`,
		"held while ping db is down")
}
