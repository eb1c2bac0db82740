package panel_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"lookout/control/admin"
)

// formOf is what a browser would submit of the form with id on the page:
// its inputs (checkboxes when checked), selected options and text areas
// (their line breaks as CR LF, as browsers send them).
func formOf(t *testing.T, body, id string) url.Values {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	var form *html.Node
	var find func(*html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "form" {
			if v, _ := attr(n, "id"); v == id {
				form = n
			}
		}
		for c := n.FirstChild; c != nil && form == nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if form == nil {
		t.Fatalf("no form %q on the page:\n%s", id, body)
	}
	out := url.Values{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			name, named := attr(n, "name")
			switch n.Data {
			case "input":
				typ, _ := attr(n, "type")
				_, checked := attr(n, "checked")
				val, _ := attr(n, "value")
				if named && (typ != "checkbox" || checked) {
					out.Add(name, val)
				}
			case "textarea":
				if named {
					text := ""
					if n.FirstChild != nil {
						text = n.FirstChild.Data
					}
					out.Add(name, strings.ReplaceAll(text, "\n", "\r\n"))
				}
			case "select":
				for o := n.FirstChild; o != nil; o = o.NextSibling {
					if _, sel := attr(o, "selected"); sel && named {
						v, _ := attr(o, "value")
						out.Add(name, v)
					}
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(form)
	return out
}

// manifestOf reads a monitor's manifest through the Management API,
// without its uuid and status.
func (n *node) manifestOf(a account, id string) map[string]any {
	n.t.Helper()
	st, body := n.api(a, "GET", "/api/v1/monitors/"+id, "")
	if st != http.StatusOK {
		n.t.Fatalf("get %s: %d %s", id, st, body)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		n.t.Fatal(err)
	}
	delete(m, "uuid")
	delete(m, "status")
	return m
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestFormsMakeWhatTheAPIMakes creates a monitor of each kind in the
// panel and the same monitor through the Management API: the two are
// the same manifest.
func TestFormsMakeWhatTheAPIMakes(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	if _, err := n.Admin.CreateGroup(t.Context(), a.ID, "oncall", json.RawMessage(`[{"type":"webhook","name":"pager","config":{"url":"https://hooks.example.com/x"}}]`)); err != nil {
		t.Fatal(err)
	}
	b := n.browser()
	b.signIn(a)
	for _, tc := range []struct {
		kind string
		form url.Values
		api  string
	}{
		{"ping", url.Values{"name": {"backup-panel"}, "display_name": {"Nightly backup"}, "project": {"infra"}, "timeout_seconds": {"600"},
			"expected_interval_seconds": {"86400"}, "grace_seconds": {"300"}, "tags": {"nightly, db"}, "notification_group": {"oncall"}, "enabled": {"true"}},
			`{"manifest_version":1,"kind":"ping","name":"backup-api","display_name":"Nightly backup","project":"infra","timeout_seconds":600,"expected_interval_seconds":86400,"grace_seconds":300,"tags":["nightly","db"],"notification_group":"oncall"}`},
		{"http_check", url.Values{"name": {"shop-panel"}, "config.url": {"https://shop.example.com/health"}, "config.method": {"HEAD"}, "config.expected_status": {"204"},
			"config.expected_content": {""}, "config.timeout": {"5"}, "config.follow_redirects": {"true"}, "schedule": {"5m"}, "regions": {"eu-1, us-1"}, "confirm_regions": {"2"}, "tags": {"web"}},
			`{"manifest_version":1,"kind":"http_check","name":"shop-api","enabled":false,"schedule":"5m","regions":["eu-1","us-1"],"confirm_regions":2,"tags":["web"],"config":{"url":"https://shop.example.com/health","method":"HEAD","expected_status":204,"timeout":5}}`},
		{"ssl_check", url.Values{"name": {"cert-panel"}, "config.domain": {"Example.com:8443"}, "config.warning_days": {"20"}, "config.alert_days": {""}, "schedule": {"0 6 * * *"}, "enabled": {"true"}},
			`{"manifest_version":1,"kind":"ssl_check","name":"cert-api","schedule":"0 6 * * *","config":{"domain":"Example.com:8443","warning_days":20}}`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			b.get("/monitors/new?kind="+tc.kind).want(t, http.StatusOK, `name="kind" value="`+tc.kind+`"`)
			tc.form.Set("kind", tc.kind)
			p := b.post("/monitors/new", tc.form)
			if p.Status != http.StatusSeeOther || !strings.HasSuffix(p.Location, "?done=created") {
				t.Fatalf("create: %d %s\n%s", p.Status, p.Location, p.Body)
			}
			id := strings.TrimSuffix(strings.TrimPrefix(p.Location, "/monitors/"), "?done=created")
			b.get(p.Location).want(t, http.StatusOK, "Created ")
			if st, body := n.api(a, "POST", "/api/v1/monitors", tc.api); st != http.StatusCreated {
				t.Fatalf("api create: %d %s", st, body)
			}
			panelMade := n.manifestOf(a, id)
			apiMade := n.manifestOf(a, n.monitorUUID(a, strings.Replace(tc.form.Get("name"), "-panel", "-api", 1)))
			delete(panelMade, "name")
			delete(apiMade, "name")
			if asJSON(panelMade) != asJSON(apiMade) {
				t.Fatalf("the panel made\n%s\nthe API made\n%s", asJSON(panelMade), asJSON(apiMade))
			}
		})
	}
}

// TestFormShowsEachProblemNextToItsField posts forms the Management API
// refuses: each problem comes back with the API's code next to its
// field, and the form keeps what was typed.
func TestFormShowsEachProblemNextToItsField(t *testing.T) {
	n := newNode(t)
	limit := int64(3)
	a := n.signUp("ops@example.com", &admin.PlanRequest{MonitorLimit: &limit})
	n.ping(a, `{"event_type":"ping","monitor":"taken","status":"complete"}`)
	b := n.browser()
	b.signIn(a)
	ping := func(kv ...string) url.Values {
		v := url.Values{"kind": {"ping"}, "name": {"job"}, "timeout_seconds": {"60"}, "enabled": {"true"}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	httpCheck := func(kv ...string) url.Values {
		v := url.Values{"kind": {"http_check"}, "name": {"web"}, "schedule": {"5m"}, "config.url": {"https://example.com"}, "config.expected_status": {"200"}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	sslCheck := func(kv ...string) url.Values {
		v := url.Values{"kind": {"ssl_check"}, "name": {"cert"}, "schedule": {"1h"}, "config.domain": {"example.com"}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string // "" for a problem of no field
		code  string
	}{
		{"ping name missing", ping("name", ""), "name", "name_invalid"},
		{"ping name charset", ping("name", "nightly backup"), "name", "name_charset_invalid"},
		{"check name too long", httpCheck("name", strings.Repeat("x", 256)), "name", "name_invalid"},
		{"name taken", ping("name", "taken"), "name", "name_already_exists"},
		{"display name", ping("display_name", strings.Repeat("d", 256)), "display_name", "display_name_invalid"},
		{"project", ping("project", strings.Repeat("p", 101)), "project", "project_invalid"},
		{"timeout missing", ping("timeout_seconds", ""), "timeout_seconds", "timeout_out_of_range"},
		{"timeout not a number", ping("timeout_seconds", "an hour"), "timeout_seconds", "timeout_out_of_range"},
		{"interval", ping("expected_interval_seconds", "30"), "expected_interval_seconds", "interval_out_of_range"},
		{"grace", ping("grace_seconds", "-1"), "grace_seconds", "grace_out_of_range"},
		{"tags", ping("tags", "a, a"), "tags", "tags_invalid"},
		{"group", ping("notification_group", "nobody"), "notification_group", "notification_group_invalid"},
		{"schedule", httpCheck("schedule", "every day"), "schedule", "schedule_invalid"},
		{"schedule missing", sslCheck("schedule", ""), "schedule", "schedule_invalid"},
		{"url", httpCheck("config.url", "ftp://example.com"), "config.url", "url_invalid"},
		{"method", httpCheck("config.method", "TRACE"), "config.method", "method_invalid"},
		{"check timeout", httpCheck("config.timeout", "61"), "config.timeout", "check_timeout_invalid"},
		{"assertion", httpCheck("config.expected_status", ""), "config.expected_status", "http_assertion_required"},
		{"expected status", httpCheck("config.expected_status", "99"), "config.expected_status", "expected_status_invalid"},
		{"regions", httpCheck("regions", "EU 1"), "regions", "regions_invalid"},
		{"confirm regions", httpCheck("regions", "eu-1", "confirm_regions", "2"), "confirm_regions", "confirm_regions_invalid"},
		{"domain", sslCheck("config.domain", "https://example.com/"), "config.domain", "domain_invalid"},
		{"days", sslCheck("config.warning_days", "5", "config.alert_days", "10"), "config.alert_days", "days_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.get("/monitors/new")
			p := b.post("/monitors/new", tc.form)
			p.want(t, http.StatusUnprocessableEntity, `id="problems"`)
			field := fieldHTML(t, p.Body, tc.field)
			if !strings.Contains(field, `class="field-error" data-code="`+tc.code+`"`) {
				t.Fatalf("field %s lacks the code %s:\n%s", tc.field, tc.code, field)
			}
			// What was typed is still there, the hidden fields too.
			got := formOf(t, p.Body, "monitor-form")
			for k, want := range tc.form {
				if k == "config.expected_content" || (k == "enabled" && want[0] != "true") {
					continue
				}
				if got.Get(k) != want[0] {
					t.Fatalf("%s: the form shows %q, %q was typed", k, got.Get(k), want[0])
				}
			}
		})
	}
	t.Run("plan limit", func(t *testing.T) {
		for _, name := range []string{"two", "three"} {
			b.get("/monitors/new")
			if p := b.post("/monitors/new", ping("name", name)); p.Status != http.StatusSeeOther {
				t.Fatalf("create %s: %d %s", name, p.Status, p.Body)
			}
		}
		b.get("/monitors/new")
		p := b.post("/monitors/new", ping("name", "four"))
		p.want(t, http.StatusUnprocessableEntity, `<li data-code="plan_limit_reached">`)
	})
}

// fieldHTML is the markup of the form field with key on the page.
func fieldHTML(t *testing.T, body, key string) string {
	t.Helper()
	start := strings.Index(body, `data-field="`+key+`"`)
	if start < 0 {
		t.Fatalf("no field %s on the page:\n%s", key, body)
	}
	end := strings.Index(body[start:], "</div>")
	return body[start : start+end]
}

// TestEditKeepsWhatItDoesNotChange opens each kind's edit form and saves
// it as it is: the manifest does not change. A changed field is saved; a
// ping's name cannot change.
func TestEditKeepsWhatItDoesNotChange(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	for _, body := range []string{
		`{"manifest_version":1,"kind":"ping","name":"backup","display_name":"Backup","project":"infra","timeout_seconds":600,"expected_interval_seconds":3600,"grace_seconds":0,"tags":["a","b"],"enabled":false}`,
		`{"manifest_version":1,"kind":"http_check","name":"shop","schedule":"*/5 * * * *","regions":["eu-1","us-1"],"confirm_regions":2,"config":{"url":"https://shop.example.com","expected_content":"  ok  ","method":"post"}}`,
		`{"manifest_version":1,"kind":"ssl_check","name":"cert","schedule":"1d","config":{"domain":"example.com","warning_days":40,"alert_days":3}}`,
	} {
		st, created := n.api(a, "POST", "/api/v1/monitors", body)
		if st != http.StatusCreated {
			t.Fatalf("create: %d %s", st, created)
		}
		var m struct{ UUID, Kind string }
		json.Unmarshal(created, &m)
		t.Run(m.Kind, func(t *testing.T) {
			before := n.manifestOf(a, m.UUID)
			p := b.get("/monitors/" + m.UUID + "/edit")
			p.want(t, http.StatusOK, "Save changes")
			form := formOf(t, p.Body, "monitor-form")
			if s := b.post("/monitors/"+m.UUID+"/edit", form); s.Status != http.StatusSeeOther || s.Location != "/monitors/"+m.UUID+"?done=saved" {
				t.Fatalf("save: %d %s\n%s", s.Status, s.Location, s.Body)
			}
			if after := n.manifestOf(a, m.UUID); asJSON(after) != asJSON(before) {
				t.Fatalf("saved unchanged, the manifest changed:\nbefore %s\nafter  %s", asJSON(before), asJSON(after))
			}
			form.Set("tags", "changed")
			form.Set("name", "renamed-"+m.Kind)
			b.post("/monitors/"+m.UUID+"/edit", form)
			after := n.manifestOf(a, m.UUID)
			if asJSON(after["tags"]) != `["changed"]` {
				t.Fatalf("tags not saved: %s", asJSON(after))
			}
			wantName := "renamed-" + m.Kind
			if m.Kind == "ping" {
				wantName = "backup" // shown read-only; a ping's name cannot change
			}
			if after["name"] != wantName {
				t.Fatalf("name %v, want %s", after["name"], wantName)
			}
		})
	}
	// Another account's monitor has no edit form.
	other := n.signUp("other@example.com", nil)
	ob := n.browser()
	ob.signIn(other)
	id := n.monitorUUID(a, "renamed-ssl_check")
	ob.get("/monitors/"+id+"/edit").want(t, http.StatusNotFound)
	ob.post("/monitors/"+id+"/edit", url.Values{"name": {"mine"}}).want(t, http.StatusNotFound)
}

// TestDuplicateCopiesEverythingButTheName: the copy of a monitor has all
// its settings under a new name.
func TestDuplicateCopiesEverythingButTheName(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	st, created := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"http_check","name":"shop","schedule":"1m","tags":["web"],"config":{"url":"https://shop.example.com","expected_status":200,"timeout":7}}`)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, created)
	}
	id := n.monitorUUID(a, "shop")
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/"+id).want(t, http.StatusOK, `href="/monitors/new?from=`+id+`"`, `href="/monitors/`+id+`/edit"`)
	p := b.get("/monitors/new?from=" + id)
	p.want(t, http.StatusOK, "Copy of shop", `name="from" value="`+id+`"`)
	form := formOf(t, p.Body, "monitor-form")
	if form.Get("name") != "shop-copy" || form.Get("config.url") != "https://shop.example.com" {
		t.Fatalf("copy form: %v", form)
	}
	s := b.post("/monitors/new", form)
	if s.Status != http.StatusSeeOther {
		t.Fatalf("create the copy: %d\n%s", s.Status, s.Body)
	}
	orig, cp := n.manifestOf(a, id), n.manifestOf(a, n.monitorUUID(a, "shop-copy"))
	delete(orig, "name")
	delete(cp, "name")
	if asJSON(orig) != asJSON(cp) {
		t.Fatalf("copy differs:\n%s\n%s", asJSON(orig), asJSON(cp))
	}
	b.get("/monitors/new?from=00000000-0000-0000-0000-000000000000").want(t, http.StatusNotFound)
}

// TestPingPageShowsHowToPing: the ping URL and the snippets name the
// node's public URL, and the key travels in a header.
func TestPingPageShowsHowToPing(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	n.ping(a, `{"event_type":"ping","monitor":"nightly-backup","status":"complete"}`)
	id := n.monitorUUID(a, "nightly-backup")
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/"+id).want(t, http.StatusOK,
		`<pre id="ping-url" aria-labelledby="ping-url-label">https://lookout.example.com/ping/nightly-backup</pre>`,
		`curl -fsS -m 10 --retry 3 -H &#34;Authorization: Bearer $LOOKOUT_INGEST_KEY&#34; &#39;https://lookout.example.com/ping/nightly-backup?status=complete&#39;`,
		`lookout exec nightly-backup -- COMMAND`,
		`export LOOKOUT_ADDR=https://lookout.example.com`)
}
