package panel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/control/panel"
)

// recordingMux records the patterns Register adds.
type recordingMux struct{ patterns []string }

func (m *recordingMux) Handle(pattern string, _ http.Handler) {
	m.patterns = append(m.patterns, pattern)
}

// team is an account with a user of each role, signed in, and one thing of
// each kind a route names.
type team struct {
	acct                  account
	owner, editor, viewer *browser
	viewerID              string
	ids                   map[string]string // path wildcard -> a real id
}

// newTeam makes the account, its users and their sessions on n.
func newTeam(t *testing.T, n *node) *team {
	t.Helper()
	ctx := context.Background()
	tm := &team{acct: n.signUp("owner@example.com", nil), ids: map[string]string{}}
	id := tm.acct.ID
	tm.owner = n.browser()
	tm.owner.signIn(tm.acct)
	for _, u := range []struct {
		email, role string
		b           **browser
	}{{"editor@example.com", "editor", &tm.editor}, {"viewer@example.com", "viewer", &tm.viewer}} {
		added, err := n.Admin.AddUser(ctx, id, admin.UserRequest{Email: u.email, Role: u.role, Password: "pw-" + u.email})
		if err != nil {
			t.Fatal(err)
		}
		if u.role == "viewer" {
			tm.viewerID = added.ID
		}
		*u.b = n.browser()
		(*u.b).signIn(account{Email: u.email, Password: "pw-" + u.email})
	}
	n.ping(tm.acct, `{"event_type":"ping","monitor":"backup","status":"run"}`)
	tm.ids["uuid"] = n.monitorUUID(tm.acct, "backup")
	ch, err := n.Admin.CreateChannel(ctx, id, adminChannel("slack", "ops", `{"webhook_url":"https://hooks.slack.com/x"}`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := n.Admin.CreateGroup(ctx, id, "on-call", nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := n.Store.Keys(id)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := n.Admin.CreateInvite(ctx, id, id, "new@example.com", "viewer")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(24 * time.Hour).UTC()
	st, body := n.api(tm.acct, "POST", "/api/v1/maintenance-windows", fmt.Sprintf(`{"name":"patching","starts_at":%q,"ends_at":%q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339)))
	var window struct{ ID string }
	if st != http.StatusCreated || json.Unmarshal([]byte(body), &window) != nil {
		t.Fatalf("maintenance window: %d %s", st, body)
	}
	tm.ids["/maintenance/{id}"] = window.ID
	tm.ids["/channels/{id}"], tm.ids["/groups/{id}"], tm.ids["/keys/{id}"] = ch.ID, g.ID, keys[0].GetId()
	tm.ids["/users/{id}"], tm.ids["/users/invites/{id}"], tm.ids["token"] = tm.viewerID, inv.ID, inv.Token
	return tm
}

// path fills a route pattern's wildcards with the team's ids.
func (tm *team) path(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = strings.Replace(path, "{$}", "", 1)
	path = strings.Replace(path, "{uuid}", tm.ids["uuid"], 1)
	path = strings.Replace(path, "{token}", tm.ids["token"], 1)
	for prefix, id := range tm.ids {
		if strings.HasPrefix(prefix, "/") && strings.HasPrefix(path, strings.TrimSuffix(prefix, "{id}")) {
			path = strings.Replace(path, "{id}", id, 1)
		}
	}
	return method, path
}

// answer is the start of an answer: its status, where it sends to, and
// the first bytes of its body (a stream is not read to its end).
type answer struct {
	status   int
	location string
	body     string
}

func send(t *testing.T, b *browser, method, path string, form url.Values) answer {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, b.n.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64<<10)
	n, _ := resp.Body.Read(buf)
	for n < len(buf) && resp.Header.Get("Content-Type") != "text/event-stream" {
		m, err := resp.Body.Read(buf[n:])
		n += m
		if err != nil {
			break
		}
	}
	return answer{resp.StatusCode, resp.Header.Get("Location"), string(buf[:n])}
}

const roleRefusal = "this needs the"

// publicRoutes are the only routes anyone may use without signing in.
var publicRoutes = map[string]bool{
	"GET /static/": true, "GET /login": true, "POST /login": true,
	"GET /invite/{token}": true, "POST /invite/{token}": true,
	"GET /login/sso": true, "GET /login/sso/callback": true,
}

// wantAccess is the role a route must need by the product's rules: keys,
// users and the account's settings are the owners'; every other form but
// signing out changes monitors, channels, groups, maintenance windows or
// pauses, which is the editors'; pages that read are the viewers'.
func wantAccess(pattern string) string {
	method, path, _ := strings.Cut(pattern, " ")
	switch {
	case publicRoutes[pattern]:
		return "public"
	case strings.HasPrefix(path, "/keys") || strings.HasPrefix(path, "/users") || strings.HasPrefix(path, "/account/"):
		return "owner"
	case pattern == "POST /logout":
		return "viewer"
	case method != "GET" || strings.HasSuffix(path, "/edit") || path == "/monitors/new":
		return "editor"
	}
	return "viewer"
}

// TestEveryRouteHasItsRole walks the panel's router: every pattern
// Register adds has a role in the route table, and the role is enforced
// by the server for every route. Without a session, a page sends to
// /login and anything else is 401; a user whose role is below the route's
// gets 403 (a form with its valid CSRF token included, so nothing but the
// role stops it); a user whose role suffices gets past the role check (a
// form without its token is then refused by the CSRF check, which comes
// after: so no form changes anything here).
func TestEveryRouteHasItsRole(t *testing.T) {
	n := newNode(t)
	tm := newTeam(t, n)
	rec := &recordingMux{}
	n.Panel.Register(rec)
	roles := panel.RouteAccess(n.Panel)
	if len(rec.patterns) != len(roles) {
		t.Errorf("Register added %d routes, the table has %d", len(rec.patterns), len(roles))
	}
	sort.Strings(rec.patterns)
	anon := n.browser()
	users := map[string]*browser{"viewer": tm.viewer, "editor": tm.editor, "owner": tm.owner}
	rank := map[string]int{"viewer": 1, "editor": 2, "owner": 3}
	for _, pattern := range rec.patterns {
		need, ok := roles[pattern]
		if !ok || (need != "public" && rank[need] == 0) {
			t.Errorf("route %q has no role in the route table (%q): give it public, viewer, editor or owner", pattern, need)
			continue
		}
		if want := wantAccess(pattern); need != want {
			t.Errorf("route %q needs %s, want %s", pattern, need, want)
		}
		method, path := tm.path(pattern)
		if strings.Contains(path, "{") {
			t.Errorf("route %q: no id for %s: add one to newTeam", pattern, path)
			continue
		}
		if need == "public" {
			if a := send(t, anon, method, path, url.Values{}); a.status == http.StatusUnauthorized || strings.HasPrefix(a.location, "/login?next=") {
				t.Errorf("public %s %s needs a session: %d %s", method, path, a.status, a.location)
			}
			continue
		}
		// No session.
		a := send(t, anon, method, path, url.Values{})
		if method == "GET" && (a.status != http.StatusSeeOther || !strings.HasPrefix(a.location, "/login?next=")) ||
			method != "GET" && a.status != http.StatusUnauthorized {
			t.Errorf("%s %s without a session: %d %q", method, path, a.status, a.location)
		}
		for role, b := range users {
			if rank[role] < rank[need] {
				form := url.Values{"csrf": {b.csrf}, "confirm": {"yes"}, "role": {"owner"}, "name": {"x"}, "type": {"ingest"}}
				if method == "GET" {
					form = nil
				}
				if a := send(t, b, method, path, form); a.status != http.StatusForbidden || !strings.Contains(a.body, roleRefusal) {
					t.Errorf("%s %s as %s (route needs %s): %d, want 403 for the role; body %.300s", method, path, role, need, a.status, a.body)
				}
				continue
			}
			form := url.Values{"csrf": {"not the token"}}
			if method == "GET" {
				form = nil
			}
			a := send(t, b, method, path, form)
			switch {
			case a.status == http.StatusUnauthorized || a.status == http.StatusSeeOther && strings.HasPrefix(a.location, "/login"):
				t.Errorf("%s %s as %s: not signed in: %d %s", method, path, role, a.status, a.location)
			case strings.Contains(a.body, roleRefusal):
				t.Errorf("%s %s as %s (route needs %s): refused for the role", method, path, role, need)
			case method == "GET" && a.status >= 400:
				t.Errorf("%s %s as %s: %d; body %.300s", method, path, role, a.status, a.body)
			case method != "GET" && (a.status != http.StatusForbidden || !strings.Contains(a.body, "This form has expired")):
				t.Errorf("%s %s as %s without its CSRF token: %d, want the CSRF refusal", method, path, role, a.status)
			}
		}
	}
	// Nothing a refused form asked for happened.
	if u, err := n.Store.User(tm.acct.ID, tm.viewerID); err != nil || u.GetRole() != "viewer" {
		t.Fatalf("the viewer after the walk: %v %v", u, err)
	}
	if _, err := n.Store.MonitorByUUID(tm.ids["uuid"]); err != nil {
		t.Fatalf("the monitor after the walk: %v", err)
	}
}

// A viewer reads every page but the owners'; the pages show a viewer no
// form it may not use, an editor the monitor and channel forms, an owner
// everything.
func TestPagesShowTheFormsOfTheRole(t *testing.T) {
	n := newNode(t)
	tm := newTeam(t, n)
	uuid := tm.ids["uuid"]
	for _, tc := range []struct {
		b         *browser
		path      string
		want, not []string
	}{
		{tm.viewer, "/", []string{"viewer@example.com", "backup"}, []string{`href="/monitors/new"`, `href="/keys"`, `href="/users"`}},
		{tm.viewer, "/monitors/" + uuid, []string{"backup"}, []string{"/edit", "/delete"}},
		{tm.viewer, "/channels", []string{"ops", "on-call"}, []string{"Add a channel", "Send a test"}},
		{tm.viewer, "/account", []string{"Badges"}, []string{`action="/account/badge-key"`, `action="/account/status-page"`}},
		{tm.editor, "/", []string{`href="/monitors/new"`}, []string{`href="/keys"`, `href="/users"`}},
		{tm.editor, "/monitors/" + uuid, []string{"/edit", "/delete"}, nil},
		{tm.editor, "/channels", []string{"Add a channel", "Send a test"}, nil},
		{tm.editor, "/account", nil, []string{`action="/account/badge-key"`}},
		{tm.owner, "/", []string{`href="/monitors/new"`, `href="/keys"`, `href="/users"`}, nil},
		{tm.owner, "/account", []string{`action="/account/badge-key"`, `action="/account/status-page"`}, nil},
	} {
		p := tc.b.get(tc.path)
		p.want(t, http.StatusOK, tc.want...)
		for _, s := range tc.not {
			if strings.Contains(p.Body, s) {
				t.Errorf("%s as %s shows %q", tc.path, tc.b.who, s)
			}
		}
	}
}
