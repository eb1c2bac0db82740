package panel_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// badgeKeyOf is the account's badge key as the Management API shows it.
func (n *node) badgeKeyOf(a account) string {
	n.t.Helper()
	st, body := n.api(a, "GET", "/api/v1/account", "")
	var acct struct {
		BadgeKey string `json:"badge_key"`
	}
	if err := json.Unmarshal(body, &acct); st != 200 || err != nil || acct.BadgeKey == "" {
		n.t.Fatalf("account: %d %s", st, body)
	}
	return acct.BadgeKey
}

var badgeKeyRe = regexp.MustCompile(`id="badge-key">(bk_[a-z2-7]+)<`)

func TestAccountPageBadgeKey(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"backup","status":"complete"}`)
	b := n.browser()
	b.signIn(a)
	p := b.get("/account")
	key := n.badgeKeyOf(a)
	p.want(t, http.StatusOK, `id="badge-key">`+key+`<`, `<img src="/badge/`+key+`/ping/backup.svg"`, "/badge/"+key+"/tag/")

	// Regenerating needs the box ticked.
	b.post("/account/badge-key", url.Values{}).want(t, http.StatusUnprocessableEntity, "Tick the box to confirm")
	if n.badgeKeyOf(a) != key {
		t.Fatal("the key changed without the confirmation")
	}
	p = b.post("/account/badge-key", url.Values{"confirm": {"yes"}})
	if p.Status != http.StatusSeeOther || p.Location != "/account?badge=new#badges" {
		t.Fatalf("regenerate: %d %s", p.Status, p.Location)
	}
	fresh := n.badgeKeyOf(a)
	if fresh == key {
		t.Fatal("the key did not change")
	}
	p = b.get("/account?badge=new")
	if m := badgeKeyRe.FindStringSubmatch(p.Body); m == nil || m[1] != fresh {
		t.Fatalf("the page shows %v, want %s", m, fresh)
	}
	p.want(t, http.StatusOK, "the old one no longer work")
}

func TestAccountPageStatusPage(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	for _, m := range []string{
		`{"manifest_version":1,"kind":"ping","name":"backup","display_name":"Nightly backup","timeout_seconds":60,"tags":["prod"]}`,
		`{"manifest_version":1,"kind":"ping","name":"billing-run","timeout_seconds":60,"project":"billing"}`,
		`{"manifest_version":1,"kind":"ping","name":"scratch","timeout_seconds":60}`,
	} {
		if st, body := n.api(a, "POST", "/api/v1/monitors", m); st != 201 {
			t.Fatalf("create: %d %s", st, body)
		}
	}
	b := n.browser()
	b.signIn(a)
	b.get("/account").want(t, http.StatusOK, "Not published.", `action="/account/status-page"`)

	// Refused by the Management API's checks, each next to its field; what
	// was typed stays.
	p := b.post("/account/status-page", url.Values{"enabled": {"on"}, "slug": {"Acme!"}, "title": {""}, "tags": {"prod"}, "monitors": {"not-a-uuid"}})
	p.want(t, http.StatusUnprocessableEntity, "The status page was not saved", `value="Acme!"`, "slug must be 1 to 64 of a-z", "title must be 1 to 100 characters", `match.monitors item &#34;not-a-uuid&#34; is not a monitor uuid`)
	if st, _ := n.api(a, "GET", "/api/v1/status-page", ""); st != 404 {
		t.Fatalf("a refused form saved a page: %d", st)
	}
	// Another account holds the slug: slug_taken, shown at the slug.
	other := n.signUp("other@example.com", nil)
	if st, body := n.api(other, "PUT", "/api/v1/status-page", `{"slug":"taken","title":"Theirs"}`); st != 200 {
		t.Fatalf("other's page: %d %s", st, body)
	}
	b.post("/account/status-page", url.Values{"enabled": {"on"}, "slug": {"taken"}, "title": {"Acme"}}).want(t, http.StatusUnprocessableEntity, "slug taken is taken")

	p = b.post("/account/status-page", url.Values{"enabled": {"on"}, "slug": {"acme"}, "title": {"Acme status"}, "tags": {"prod, "}, "projects": {" billing"}})
	if p.Status != http.StatusSeeOther || p.Location != "/account?page=saved#status-page" {
		t.Fatalf("save: %d %s %s", p.Status, p.Location, p.Body)
	}
	st, body := n.api(a, "GET", "/api/v1/status-page", "")
	if st != 200 || !strings.Contains(string(body), `"match":{"monitors":[],"tags":["prod"],"projects":["billing"]}`) || !strings.Contains(string(body), `"enabled":true`) {
		t.Fatalf("stored: %d %s", st, body)
	}
	p = b.get("/account?page=saved")
	p.want(t, http.StatusOK, "Status page saved.", `<a href="/status/acme" id="status-page-url">`, "It shows 2 monitors: Nightly backup, billing-run.", `value="prod"`, `value="billing"`)
	if strings.Contains(p.Body, "scratch,") || strings.Contains(p.Body, "scratch.") {
		t.Fatal("an unmatched monitor is listed as shown")
	}
	// Disabled: not published, the slug kept.
	b.post("/account/status-page", url.Values{"slug": {"acme"}, "title": {"Acme status"}})
	b.get("/account").want(t, http.StatusOK, "Not published (disabled)", "/status/acme")
}
