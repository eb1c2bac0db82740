package public_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"lookout/control/manage"
)

// badgeKey is a's badge key, as GET /api/v1/account shows it.
func (n *node) badgeKey(a account) string {
	n.t.Helper()
	status, body := n.api(a, "GET", "/api/v1/account", nil)
	key, _ := body["badge_key"].(string)
	if status != 200 || key == "" {
		n.t.Fatalf("account: %d %v", status, body)
	}
	return key
}

// badgeSetup is an account with monitors in each state: backup up,
// nightly failed (both tagged prod), site (an http_check) up, cert (an
// ssl_check) with no verdict yet, old paused; and a second account.
func badgeSetup(t *testing.T) (*node, account, string) {
	n := newNode(t)
	a := n.signUp("owner@example.com")
	n.monitor(a, pingManifest("backup", "prod", "db"))
	n.monitor(a, pingManifest("nightly", "prod"))
	old := pingManifest("old", "db")
	old["enabled"] = false
	n.monitor(a, old)
	site := n.monitor(a, map[string]any{"manifest_version": 1, "kind": "http_check", "name": "site", "schedule": "1m", "tags": []string{"web"},
		"config": map[string]any{"url": "https://example.com", "expected_status": 200}})
	n.monitor(a, map[string]any{"manifest_version": 1, "kind": "ssl_check", "name": "cert", "schedule": "1h", "config": map[string]any{"domain": "example.com"}})
	n.ping(a, "backup", "complete")
	n.ping(a, "nightly", "fail")
	n.verdict(a, site, "success")
	return n, a, n.badgeKey(a)
}

func TestBadges(t *testing.T) {
	n, a, key := badgeSetup(t)
	cases := []struct {
		path, status, color string
	}{
		{"ping/backup", "up", "#4c1"},
		{"ping/nightly", "down", "#e05d44"},
		{"ping/old", "paused", "#9f9f9f"},
		{"http_check/site", "up", "#4c1"},
		{"ssl_check/cert", "new", "#9f9f9f"},
		{"tag/prod", "down", "#e05d44"}, // down if any is down
		{"tag/web", "up", "#4c1"},
		{"tag/db", "up", "#4c1"}, // a paused one does not hide an up one
	}
	for _, c := range cases {
		name := c.path[strings.Index(c.path, "/")+1:]
		kind := c.path[:strings.Index(c.path, "/")]
		status, h, body := n.get("/badge/"+key+"/"+c.path+".svg", "")
		if status != 200 || h.Get("Content-Type") != "image/svg+xml; charset=utf-8" || !strings.HasPrefix(h.Get("Cache-Control"), "public, max-age=") {
			t.Fatalf("%s.svg: %d %v", c.path, status, h)
		}
		if !strings.HasPrefix(body, "<svg") || !strings.Contains(body, ">"+name+"</text>") || !strings.Contains(body, ">"+c.status+"</text>") ||
			!strings.Contains(body, `fill="`+c.color+`"`) || !strings.Contains(body, `aria-label="`+name+": "+c.status+`"`) {
			t.Fatalf("%s.svg: %s", c.path, body)
		}
		status, h, body = n.get("/badge/"+key+"/"+c.path+".json", "")
		var got map[string]string
		if status != 200 || h.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("%s.json: %d %v %s", c.path, status, h, body)
		}
		if want := map[string]string{"name": name, "kind": kind, "status": c.status}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s.json: %v, want %v", c.path, got, want)
		}
	}
	// Nothing else of the account: the JSON has exactly three fields.
	_, _, body := n.get("/badge/"+key+"/ping/backup.json", "")
	if body != `{"name":"backup","kind":"ping","status":"up"}`+"\n" {
		t.Fatalf("badge JSON %q", body)
	}

	// Unknown key, kind, monitor, tag and format; another account's
	// monitor through this key; a name that is another kind's.
	other := n.signUp("other@example.com")
	n.monitor(other, pingManifest("theirs"))
	otherKey := n.badgeKey(other)
	for _, path := range []string{
		"/badge/bk_nosuchkey/ping/backup.svg", "/badge/bk_nosuchkey/ping/backup.json",
		"/badge/" + key + "/cron/backup.svg", "/badge/" + key + "/ping/nosuch.svg", "/badge/" + key + "/ping/nosuch.json",
		"/badge/" + key + "/tag/nosuch.svg", "/badge/" + key + "/ping/backup.png", "/badge/" + key + "/ping/backup",
		"/badge/" + key + "/ping/theirs.svg", "/badge/" + otherKey + "/ping/backup.svg", "/badge/" + key + "/http_check/backup.svg",
		"/badge/" + key + "/ping/.svg",
	} {
		if status, h, body := n.get(path, ""); status != 404 || h.Get("Cache-Control") != "no-store" || strings.Contains(body, "backup") {
			t.Errorf("%s: %d %v %q, want a bare 404", path, status, h, body)
		}
	}

	// A regenerated key: the old URL is 404 at once, the new one works.
	fresh, err := manage.New(manage.Options{Cluster: n.c, State: n.store}).RegenerateBadgeKey(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := n.get("/badge/"+key+"/ping/backup.svg", ""); status != 404 {
		t.Fatalf("the old key answers %d", status)
	}
	if status, _, _ := n.get("/badge/"+fresh+"/ping/backup.svg", ""); status != 200 {
		t.Fatalf("the new key answers %d", status)
	}
}

func TestBadgeNamesAreEscaped(t *testing.T) {
	n := newNode(t)
	a := n.signUp("owner@example.com")
	// Checks may be called nearly anything; the name comes back escaped
	// in the SVG and whole in the JSON.
	name := `a<b> & "c"/d:ü`
	n.monitor(a, map[string]any{"manifest_version": 1, "kind": "http_check", "name": name, "schedule": "1m",
		"config": map[string]any{"url": "https://example.com", "expected_status": 200}})
	key := n.badgeKey(a)
	status, _, body := n.get("/badge/"+key+"/http_check/"+url.PathEscape(name)+".svg", "")
	if status != 200 || strings.Contains(body, "<b>") || !strings.Contains(body, "a&lt;b&gt; &amp; &#34;c&#34;/d:ü") {
		t.Fatalf("%d %s", status, body)
	}
	_, _, body = n.get("/badge/"+key+"/http_check/"+url.PathEscape(name)+".json", "")
	var got map[string]string
	if json.Unmarshal([]byte(body), &got); got["name"] != name || got["status"] != "new" {
		t.Fatalf("%s", body)
	}
}

func TestPublicAnswersAreCached(t *testing.T) {
	n, a, key := badgeSetup(t)
	status, _ := n.api(a, "PUT", "/api/v1/status-page", map[string]any{"slug": "acme", "title": "Acme"})
	if status != 200 {
		t.Fatalf("put: %d", status)
	}
	for _, path := range []string{"/badge/" + key + "/tag/prod.svg", "/status/acme", "/badge/bk_unknown/ping/x.svg"} {
		first, _, body1 := n.get(path, "")
		before := n.reads.count()
		second, _, body2 := n.get(path, "")
		if n.reads.count() != before || first != second || body1 != body2 {
			t.Fatalf("%s: a second request within the cache's time read the state %d times", path, n.reads.count()-before)
		}
		// Past the time to live, it is read again.
		n.clock.advance(11 * time.Second)
		n.get(path, "")
		if n.reads.count() == before {
			t.Fatalf("%s: the answer outlived its time to live", path)
		}
	}
	// A change of the page is seen at once, not after the time to live.
	n.get("/status/acme", "")
	if status, _ := n.api(a, "PUT", "/api/v1/status-page", map[string]any{"slug": "acme", "title": "Acme", "enabled": false}); status != 200 {
		t.Fatal("disable")
	}
	if status, _, _ := n.get("/status/acme", ""); status != 404 {
		t.Fatalf("a disabled page answers %d from the cache", status)
	}
}

func TestPublicRateLimitPerAddress(t *testing.T) {
	n, _, key := badgeSetup(t)
	path := "/badge/" + key + "/ping/backup.svg"
	for i := range 120 {
		if status, _, _ := n.get(path, "203.0.113.7"); status != 200 {
			t.Fatalf("request %d: %d", i, status)
		}
	}
	status, h, _ := n.get(path, "203.0.113.7")
	if status != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("over the burst: %d %v", status, h)
	}
	if status, _, _ := n.get(path, "198.51.100.9"); status != 200 {
		t.Fatalf("another address: %d", status)
	}
}
