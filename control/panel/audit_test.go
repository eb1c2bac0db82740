package panel_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"lookout/control/state"
	"lookout/internal/apikey"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// auditLog is the account's whole audit log, newest first.
func (n *node) auditLog(a account) []*statev1.AuditEntry {
	n.t.Helper()
	es, err := n.Store.AuditLog(a.ID, nil, state.AuditFilter{}, state.MaxAuditEntries)
	if err != nil {
		n.t.Fatal(err)
	}
	return es
}

// TestPanelChangesAreTheSignedInUsers: what a user does in the panel is in
// the audit log as that user (their id and e-mail), whichever API's Go
// call the panel makes it through, and so are their sign-in and sign-out.
func TestPanelChangesAreTheSignedInUsers(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ann@example.com", nil)
	b := n.browser()
	b.signIn(a)
	b.post("/keys", url.Values{"type": {"management"}, "name": {"deploy"}, "scope": {"read"}}).want(t, http.StatusCreated)
	b.get("/monitors/new")
	if p := b.post("/monitors/new", url.Values{"kind": {"ping"}, "name": {"job"}, "timeout_seconds": {"60"}, "enabled": {"true"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("create: %d %s", p.Status, p.Body)
	}
	id := n.monitorUUID(a, "job")
	if p := b.post("/monitors/"+id+"/delete", url.Values{"confirm_name": {"job"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("delete: %d %s", p.Status, p.Body)
	}
	b.get("/account")
	if p := b.post("/account/badge-key", url.Values{"confirm": {"yes"}}); p.Status != http.StatusSeeOther {
		t.Fatalf("badge key: %d %s", p.Status, p.Body)
	}
	b.get("/")
	if p := b.post("/logout", nil); p.Status != http.StatusSeeOther {
		t.Fatalf("sign out: %d %s", p.Status, p.Body)
	}
	var got []string
	for _, e := range n.auditLog(a) {
		if e.GetAction() == "account.create" {
			continue // the test's own Go call, with no actor
		}
		got = append(got, e.GetAction()+" "+e.GetTarget().GetName())
		if act := e.GetActor(); act.GetType() != "user" || act.GetId() != a.ID || act.GetName() != a.Email {
			t.Errorf("%s by %v, want the user %s %s", e.GetAction(), act, a.ID, a.Email)
		}
	}
	want := "sign_out ann@example.com, badge_key.regenerate ann@example.com, delete job, create job, key.create deploy, sign_in ann@example.com"
	if strings.Join(got, ", ") != want {
		t.Fatalf("entries %s\nwant    %s", strings.Join(got, ", "), want)
	}
}

// TestSignInIsRecordedOrRefused: a sign-in without a leader is refused
// (503, no session), so that nobody is signed in unrecorded.
func TestSignInIsRecordedOrRefused(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ann@example.com", nil)
	b := n.browser()
	b.get("/login")
	n.Cluster.FailApply(errors.New("no leader"))
	p := b.post("/login", url.Values{"email": {a.Email}, "password": {a.Password}})
	p.want(t, http.StatusServiceUnavailable, "no leader")
	if b.get("/").Status != http.StatusSeeOther {
		t.Fatal("signed in without the sign-in recorded")
	}
	if es := n.auditLog(a); len(es) != 1 {
		t.Fatalf("%d entries, want the account's creation only", len(es))
	}
	n.Cluster.FailApply(nil)
	b.signIn(a)
	if es := n.auditLog(a); len(es) != 2 || es[0].GetAction() != "sign_in" {
		t.Fatalf("entries %v", es)
	}
}

var auditRowRe = regexp.MustCompile(`<tr id="entry-[0-9]+-[0-9]+">`)

// TestAuditPage: /audit shows the account's log newest first, 50 a page
// with a link to the older ones that keeps the filters, filters by actor,
// monitor and action, shows no other account's entries, and reading it
// writes nothing.
func TestAuditPage(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ann@example.com", nil)
	other := n.signUp("bob@example.com", nil)
	n.api(other, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"ping","name":"secret-job","timeout_seconds":60}`)
	var ms []string
	for i := range 55 {
		ms = append(ms, fmt.Sprintf(`{"manifest_version":1,"kind":"ping","name":"job-%02d","timeout_seconds":60}`, i))
	}
	if status, body := n.api(a, "POST", "/api/v1/monitors/apply", `{"manifest_version":1,"monitors":[`+strings.Join(ms, ",")+`]}`); status != http.StatusOK {
		t.Fatalf("apply: %d %s", status, body)
	}
	b := n.browser()
	b.signIn(a)
	entries := len(n.auditLog(a)) // the account, 55 applies, the sign-in

	p := b.get("/audit")
	p.want(t, http.StatusOK, "<h1>Audit log</h1>", `aria-current="page">Audit log`, "sign_in", "ann@example.com")
	if rows := len(auditRowRe.FindAllString(p.Body, -1)); rows != 50 {
		t.Fatalf("%d rows on the first page, want 50", rows)
	}
	if strings.Contains(p.Body, "secret-job") || strings.Contains(p.Body, "bob@example.com") {
		t.Fatal("another account's entries shown")
	}
	older := regexp.MustCompile(`href="/audit\?([^"]+)" rel="next"`).FindStringSubmatch(p.Body)
	if older == nil {
		t.Fatal("no link to older entries")
	}
	p = b.get("/audit?" + strings.ReplaceAll(older[1], "&amp;", "&"))
	p.want(t, http.StatusOK, "account.create", `rel="first"`)
	if rows := len(auditRowRe.FindAllString(p.Body, -1)); rows != entries-50 {
		t.Fatalf("%d rows on the second page, want %d", rows, entries-50)
	}

	p = b.get("/audit?monitor=job-07")
	p.want(t, http.StatusOK, ">job-07</a>", `<code>apply</code>`, "personal", "<dt>timeout_seconds</dt>")
	if rows := len(auditRowRe.FindAllString(p.Body, -1)); rows != 1 {
		t.Fatalf("%d rows for monitor job-07, want 1", rows)
	}
	p = b.get("/audit?action=sign_in&actor=" + url.QueryEscape(a.Email))
	if rows := len(auditRowRe.FindAllString(p.Body, -1)); rows != 1 || !strings.Contains(p.Body, "<code>sign_in</code>") {
		t.Fatalf("%d rows for the user's sign-ins, want 1", rows)
	}
	p = b.get("/audit?action=key.revoke")
	p.want(t, http.StatusOK, "No entries match.")
	b.get("/audit?before=nope").want(t, http.StatusBadRequest)

	if after := len(n.auditLog(a)); after != entries {
		t.Fatalf("%d entries after reading the page, want %d", after, entries)
	}
}

// TestPingCreatedMonitorIsTheIngestKeys: a monitor a ping creates is in
// the audit log as made by the ingest key that sent the ping (its id and
// name); the pings that follow write nothing.
func TestPingCreatedMonitorIsTheIngestKeys(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ann@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"nightly","status":"run"}`)
	n.ping(a, `{"event_type":"ping","monitor":"nightly","status":"complete"}`)
	key, err := n.Store.KeyByHash(apikey.Hash(a.IngestKey))
	if err != nil {
		t.Fatal(err)
	}
	es := n.auditLog(a)
	if len(es) != 2 {
		t.Fatalf("%d entries, want the account's creation and the monitor's", len(es))
	}
	e := es[0]
	if act := e.GetActor(); e.GetAction() != "create" || e.GetTarget().GetName() != "nightly" ||
		act.GetType() != "key" || act.GetId() != key.GetId() || act.GetName() != key.GetName() || act.GetName() == "" {
		t.Fatalf("entry %v", e)
	}
}
