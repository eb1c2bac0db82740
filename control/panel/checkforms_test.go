package panel_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"lookout/internal/manifest"
	"lookout/internal/probe/probetest"
)

// created posts a monitor form and returns the new monitor's uuid,
// failing unless it was created.
func (b *browser) created(form url.Values) string {
	b.t.Helper()
	b.get("/monitors/new?kind=" + form.Get("kind"))
	p := b.post("/monitors/new", form)
	if p.Status != http.StatusSeeOther || !strings.HasSuffix(p.Location, "?done=created") {
		b.t.Fatalf("create: %d %s\n%s", p.Status, p.Location, p.Body)
	}
	return strings.TrimSuffix(strings.TrimPrefix(p.Location, "/monitors/"), "?done=created")
}

// secretsOf are the secrets the state holds for check id: its headers by
// name, the basic auth password and the client key.
func (n *node) secretsOf(a account, id string) (headers map[string]string, password, clientKey string) {
	n.t.Helper()
	m, err := n.Store.Monitor(a.ID, id)
	if err != nil {
		n.t.Fatal(err)
	}
	c := m.GetConfig()
	headers = map[string]string{}
	for _, h := range c.GetHeaders() {
		headers[h.GetName()] = h.GetValue()
	}
	return headers, c.GetBasicAuth().GetPassword(), c.GetClientKey()
}

// TestHTTPCheckOptionsInTheForm makes an http_check with every option
// in the panel: the manifest is the one the Management API makes of the
// same options, the state holds the secrets, the edit form shows them
// masked, and saving it unchanged keeps them.
func TestHTTPCheckOptionsInTheForm(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	ca := probetest.NewRoot(t, "corp root", probetest.For(365*probetest.Day))
	client := ca.ClientLeaf(t, probetest.For(30*probetest.Day), "watcher")
	form := url.Values{"kind": {"http_check"}, "name": {"orders-panel"}, "schedule": {"1m"}, "enabled": {"true"},
		"config.url": {"https://orders.example.com/health"}, "config.method": {"POST"}, "config.timeout": {"5"}, "config.follow_redirects": {"true"},
		"config.headers":         {"Authorization: Bearer t0ken-secret\r\nContent-Type: application/json\r\n\r\nx-api-key:k3y-secret  "},
		"config.body":            {`{"deep": true}`},
		"config.expected_status": {"200, 3xx"},
		"config.content_absent":  {"error"},
		"config.json_path":       {"$.status = \"ok\"\r\n$['a=b'].count = 3\r\n$.ready=true"},
		"config.max_response_ms": {"1500"},
		"config.ca":              {strings.ReplaceAll(ca.PEM(), "\n", "\r\n")},
		"config.tls_skip_verify": {"true"},
		"config.client_cert":     {client.PEM()},
		"config.client_key":      {client.KeyPEM(t)},
	}
	id := b.created(form)
	api := `{"manifest_version":1,"kind":"http_check","name":"orders-api","schedule":"1m","config":{"url":"https://orders.example.com/health","method":"POST","timeout":5,` +
		`"headers":{"Authorization":"Bearer t0ken-secret","Content-Type":"application/json","X-Api-Key":"k3y-secret"},"body":"{\"deep\": true}",` +
		`"expected_status":[200,"3xx"],"content_absent":"error","json_path":[{"path":"$.status","equals":"ok"},{"path":"$['a=b'].count","equals":3},{"path":"$.ready","equals":true}],` +
		`"max_response_ms":1500,"ca":` + asJSON(ca.PEM()) + `,"tls_skip_verify":true,"client_cert":` + asJSON(client.PEM()) + `,"client_key":` + asJSON(client.KeyPEM(t)) + `}}`
	if st, body := n.api(a, "POST", "/api/v1/monitors", api); st != http.StatusCreated {
		t.Fatalf("api create: %d %s", st, body)
	}
	panelMade, apiMade := n.manifestOf(a, id), n.manifestOf(a, n.monitorUUID(a, "orders-api"))
	delete(panelMade, "name")
	delete(apiMade, "name")
	if asJSON(panelMade) != asJSON(apiMade) {
		t.Fatalf("the panel made\n%s\nthe API made\n%s", asJSON(panelMade), asJSON(apiMade))
	}
	headers, _, key := n.secretsOf(a, id)
	if headers["Authorization"] != "Bearer t0ken-secret" || headers["X-Api-Key"] != "k3y-secret" || key != client.KeyPEM(t) {
		t.Fatalf("stored secrets: %v, key %q", headers, key)
	}

	// Basic auth instead of the Authorization header, and no redirects.
	form.Set("name", "orders-basic")
	form.Set("config.headers", "Content-Type: application/json")
	form.Set("config.basic_auth.username", "watch")
	form.Set("config.basic_auth.password", "pa55-secret")
	form.Del("config.follow_redirects")
	basic := b.created(form)
	c := n.manifestOf(a, basic)["config"].(map[string]any)
	if asJSON(c["basic_auth"]) != `{"password":"********","username":"watch"}` || c["follow_redirects"] != false {
		t.Fatalf("basic auth and redirects: %s", asJSON(c))
	}
	if _, pw, _ := n.secretsOf(a, basic); pw != "pa55-secret" {
		t.Fatalf("stored password %q", pw)
	}

	t.Run("edit shows the secrets masked and keeps them", func(t *testing.T) {
		for _, id := range []string{id, basic} {
			before := n.manifestOf(a, id)
			beforeHeaders, beforePw, beforeKey := n.secretsOf(a, id)
			p := b.get("/monitors/" + id + "/edit")
			p.want(t, http.StatusOK, "Save changes")
			for _, secret := range []string{"t0ken-secret", "k3y-secret", "pa55-secret", strings.Split(client.KeyPEM(t), "\n")[1]} {
				if strings.Contains(p.Body, secret) {
					t.Fatalf("the edit form shows the secret %q:\n%s", secret, p.Body)
				}
			}
			edit := formOf(t, p.Body, "monitor-form")
			if id == basic {
				if edit.Get("config.basic_auth.username") != "watch" || edit.Get("config.basic_auth.password") != manifest.Mask ||
					edit.Get("config.follow_redirects") != "" {
					t.Fatalf("the edit form: %v", edit)
				}
			} else if !strings.Contains(edit.Get("config.headers"), "Authorization: "+manifest.Mask) ||
				!strings.Contains(edit.Get("config.headers"), "Content-Type: application/json") ||
				edit.Get("config.client_key") != manifest.Mask || edit.Get("config.expected_status") != "200, 3xx" ||
				edit.Get("config.json_path") != "$.status = \"ok\"\r\n$['a=b'].count = 3\r\n$.ready = true" ||
				edit.Get("config.follow_redirects") != "true" || edit.Get("config.tls_skip_verify") != "true" {
				t.Fatalf("the edit form: %v", edit)
			}
			if s := b.post("/monitors/"+id+"/edit", edit); s.Status != http.StatusSeeOther {
				t.Fatalf("save unchanged: %d\n%s", s.Status, s.Body)
			}
			if after := n.manifestOf(a, id); asJSON(after) != asJSON(before) {
				t.Fatalf("saved unchanged, the manifest changed:\nbefore %s\nafter  %s", asJSON(before), asJSON(after))
			}
			afterHeaders, afterPw, afterKey := n.secretsOf(a, id)
			if asJSON(afterHeaders) != asJSON(beforeHeaders) || afterPw != beforePw || afterKey != beforeKey {
				t.Fatalf("saved unchanged, the secrets changed: %v %q %q", afterHeaders, afterPw, afterKey)
			}
		}
		// A secret typed in replaces the stored one; the others stay.
		edit := formOf(t, b.get("/monitors/"+id+"/edit").Body, "monitor-form")
		edit.Set("config.headers", strings.Replace(edit.Get("config.headers"), "Authorization: "+manifest.Mask, "Authorization: Bearer n3w-secret", 1))
		if s := b.post("/monitors/"+id+"/edit", edit); s.Status != http.StatusSeeOther {
			t.Fatalf("save a new secret: %d\n%s", s.Status, s.Body)
		}
		if h, _, key := n.secretsOf(a, id); h["Authorization"] != "Bearer n3w-secret" || h["X-Api-Key"] != "k3y-secret" || key != client.KeyPEM(t) {
			t.Fatalf("after a new secret: %v %q", h, key)
		}
	})
}

// TestNetChecksInTheForm makes a tcp_check and a dns_check in the panel,
// each the monitor the Management API makes of the same fields, and
// saves each edit form unchanged.
func TestNetChecksInTheForm(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	b.get("/monitors/new").want(t, http.StatusOK, `href="/monitors/new?kind=tcp_check"`, `href="/monitors/new?kind=dns_check"`)
	for _, tc := range []struct {
		kind string
		form url.Values
		api  string
	}{
		{"tcp_check", url.Values{"name": {"redis-panel"}, "config.host": {"redis.example.com"}, "config.port": {"6379"}, "config.timeout": {"3"},
			"config.send": {"PING\r\n"}, "config.expect": {"+PONG"}, "schedule": {"30s"}, "regions": {"dc-1"}, "enabled": {"true"}},
			`{"manifest_version":1,"kind":"tcp_check","name":"redis-api","schedule":"30s","regions":["dc-1"],"config":{"host":"redis.example.com","port":6379,"timeout":3,"send":"PING\r\n","expect":"+PONG"}}`},
		{"dns_check", url.Values{"name": {"www-panel"}, "config.name": {"www.example.com"}, "config.type": {"AAAA"}, "config.server": {"1.1.1.1:53"},
			"config.expected": {"2001:db8::1, 2001:db8::2\r\n2001:db8::3"}, "schedule": {"5m"}, "enabled": {"true"}},
			`{"manifest_version":1,"kind":"dns_check","name":"www-api","schedule":"5m","config":{"name":"www.example.com","type":"AAAA","server":"1.1.1.1:53","expected":["2001:db8::1","2001:db8::2","2001:db8::3"]}}`},
		{"dns_check", url.Values{"name": {"spf-panel"}, "config.name": {"example.com"}, "config.type": {"TXT"},
			"config.expected": {"v=spf1 a, mx -all\r\ngreeting, world"}, "schedule": {"5m"}, "enabled": {"true"}},
			`{"manifest_version":1,"kind":"dns_check","name":"spf-api","schedule":"5m","config":{"name":"example.com","type":"TXT","expected":["v=spf1 a, mx -all","greeting, world"]}}`},
	} {
		t.Run(tc.form.Get("name"), func(t *testing.T) {
			b.get("/monitors/new?kind="+tc.kind).want(t, http.StatusOK, `name="kind" value="`+tc.kind+`"`, `aria-current="page">`)
			tc.form.Set("kind", tc.kind)
			id := b.created(tc.form)
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
			edit := formOf(t, b.get("/monitors/"+id+"/edit").Body, "monitor-form")
			if s := b.post("/monitors/"+id+"/edit", edit); s.Status != http.StatusSeeOther {
				t.Fatalf("save unchanged: %d\n%s", s.Status, s.Body)
			}
			after := n.manifestOf(a, id)
			delete(after, "name")
			if asJSON(after) != asJSON(panelMade) {
				t.Fatalf("saved unchanged, the manifest changed:\nbefore %s\nafter  %s", asJSON(panelMade), asJSON(after))
			}
		})
	}
}

// TestCheckOptionProblemsNextToTheirFields posts check forms the
// Management API refuses, or whose text the panel cannot read as
// headers or assertions: each problem is shown next to its field with
// the API's code, and the form keeps what was typed.
func TestCheckOptionProblemsNextToTheirFields(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	b := n.browser()
	b.signIn(a)
	with := func(base url.Values, kv ...string) url.Values {
		v := url.Values{}
		for k, x := range base {
			v[k] = x
		}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	httpCheck := url.Values{"kind": {"http_check"}, "name": {"web"}, "schedule": {"5m"}, "config.url": {"https://example.com"}, "config.expected_status": {"200"}}
	sslCheck := url.Values{"kind": {"ssl_check"}, "name": {"cert"}, "schedule": {"1h"}, "config.domain": {"example.com"}}
	tcpCheck := url.Values{"kind": {"tcp_check"}, "name": {"redis"}, "schedule": {"1m"}, "config.host": {"redis.example.com"}, "config.port": {"6379"}}
	dnsCheck := url.Values{"kind": {"dns_check"}, "name": {"www"}, "schedule": {"1m"}, "config.name": {"www.example.com"}, "config.type": {"A"}}
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
		code  string
		// not is a text the page must not show (a secret in a message).
		not string
	}{
		{"header line without a colon", with(httpCheck, "config.headers", "Accept: text/plain\r\nBearer s3cret-token"), "config.headers", "header_invalid", "s3cret-token"},
		{"header line without a name", with(httpCheck, "config.headers", ": value"), "config.headers", "header_invalid", ""},
		{"hop-by-hop header", with(httpCheck, "config.headers", "Connection: close"), "config.headers", "header_invalid", ""},
		{"header name", with(httpCheck, "config.headers", "X Token: s3cret-token"), "config.headers", "header_invalid", ""},
		{"masked header on create", with(httpCheck, "config.headers", "Authorization: "+manifest.Mask), "config.headers", "secret_masked", ""},
		{"masked password on create", with(httpCheck, "config.basic_auth.username", "watch", "config.basic_auth.password", manifest.Mask), "config.basic_auth", "secret_masked", ""},
		{"basic auth user", with(httpCheck, "config.basic_auth.username", "a:b", "config.basic_auth.password", "pw"), "config.basic_auth", "basic_auth_invalid", ""},
		{"basic auth without a user", with(httpCheck, "config.basic_auth.password", "pw"), "config.basic_auth", "basic_auth_invalid", ""},
		{"json path line without =", with(httpCheck, "config.json_path", "$.status"), "config.json_path", "json_path_invalid", ""},
		{"json path value not JSON", with(httpCheck, "config.json_path", "$.status = ok"), "config.json_path", "json_path_invalid", ""},
		{"json path", with(httpCheck, "config.json_path", "$..status = \"ok\""), "config.json_path", "json_path_invalid", ""},
		{"json path value an object", with(httpCheck, "config.json_path", "$.a = {\"b\": 1}"), "config.json_path", "json_path_invalid", ""},
		{"body too large", with(httpCheck, "config.body", strings.Repeat("b", 64<<10+1)), "config.body", "body_too_large", ""},
		{"expected status list", with(httpCheck, "config.expected_status", "200, 6xx"), "config.expected_status", "expected_status_invalid", ""},
		{"max response", with(httpCheck, "config.max_response_ms", "20000"), "config.max_response_ms", "max_response_ms_invalid", ""},
		{"ca", with(httpCheck, "config.ca", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----"), "config.ca", "ca_invalid", ""},
		{"client cert without key", with(httpCheck, "config.client_cert", "x"), "config.client_cert", "client_cert_invalid", ""},
		{"ssl ca", with(sslCheck, "config.ca", "no PEM here"), "config.ca", "ca_invalid", ""},
		{"ssl port", with(sslCheck, "config.port", "70000"), "config.port", "port_invalid", ""},
		{"ssl port twice", with(sslCheck, "config.domain", "example.com:8443", "config.port", "443"), "config.port", "port_invalid", ""},
		{"tcp host", with(tcpCheck, "config.host", "redis example"), "config.host", "host_invalid", ""},
		{"tcp host missing", with(tcpCheck, "config.host", ""), "config.host", "host_invalid", ""},
		{"tcp port", with(tcpCheck, "config.port", "0"), "config.port", "port_invalid", ""},
		{"tcp port missing", with(tcpCheck, "config.port", ""), "config.port", "port_invalid", ""},
		{"tcp send", with(tcpCheck, "config.send", strings.Repeat("s", 4097)), "config.send", "send_invalid", ""},
		{"dns name", with(dnsCheck, "config.name", "www..example.com"), "config.name", "host_invalid", ""},
		{"dns type", with(dnsCheck, "config.type", "SRV"), "config.type", "dns_type_invalid", ""},
		{"dns server", with(dnsCheck, "config.server", "1.1.1.1:99999"), "config.server", "port_invalid", ""},
		{"dns expected", with(dnsCheck, "config.expected", "93.184.215.14, 2001:db8::1"), "config.expected", "dns_expected_invalid", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b.get("/monitors/new?kind=" + tc.form.Get("kind"))
			p := b.post("/monitors/new", tc.form)
			p.want(t, http.StatusUnprocessableEntity, `id="problems"`)
			field := fieldHTML(t, p.Body, tc.field)
			if !strings.Contains(field, `class="field-error" data-code="`+tc.code+`"`) {
				t.Fatalf("field %s lacks the code %s:\n%s", tc.field, tc.code, field)
			}
			if tc.not != "" && strings.Contains(field[strings.Index(field, "field-error"):], tc.not) {
				t.Fatalf("the problem quotes %q:\n%s", tc.not, field)
			}
			got := formOf(t, p.Body, "monitor-form")
			for k, want := range tc.form {
				if lf(got.Get(k)) != lf(want[0]) {
					t.Fatalf("%s: the form shows %q, %q was typed", k, got.Get(k), want[0])
				}
			}
			if ms, _ := n.Store.Monitors(a.ID); len(ms) != 0 {
				t.Fatalf("a refused form made %d monitors", len(ms))
			}
		})
	}
	t.Run("every problem at once", func(t *testing.T) {
		b.get("/monitors/new?kind=http_check")
		p := b.post("/monitors/new", with(httpCheck, "config.headers", "no colon", "config.json_path", "$.a", "config.url", "ftp://x", "config.body", strings.Repeat("b", 64<<10+1)))
		p.want(t, http.StatusUnprocessableEntity, "4 problems")
		for field, code := range map[string]string{"config.headers": "header_invalid", "config.json_path": "json_path_invalid", "config.url": "url_invalid", "config.body": "body_too_large"} {
			if f := fieldHTML(t, p.Body, field); !strings.Contains(f, `data-code="`+code+`"`) {
				t.Fatalf("field %s lacks %s:\n%s", field, code, f)
			}
		}
	})
}

// lf is s with CR LF line breaks as LF.
func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// TestDuplicateACheckWithSecrets: the copy of a check with secrets shows
// every setting but the secrets, whose inputs are empty with a note to
// enter them again (a mask would stand for nothing: the copy has no
// stored secret); entered again, the copy has them.
func TestDuplicateACheckWithSecrets(t *testing.T) {
	n := newNode(t)
	a := n.signUp("ops@example.com", nil)
	ca := probetest.NewRoot(t, "corp root", probetest.For(365*probetest.Day))
	client := ca.ClientLeaf(t, probetest.For(30*probetest.Day), "watcher")
	st, created := n.api(a, "POST", "/api/v1/monitors", `{"manifest_version":1,"kind":"http_check","name":"orders","schedule":"1m","config":{"url":"https://orders.example.com",`+
		`"headers":{"X-Api-Key":"k3y-secret","Accept":"application/json"},"basic_auth":{"username":"watch","password":"pa55-secret"},"expected_status":"2xx",`+
		`"client_cert":`+asJSON(client.PEM())+`,"client_key":`+asJSON(client.KeyPEM(t))+`}}`)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, created)
	}
	id := n.monitorUUID(a, "orders")
	b := n.browser()
	b.signIn(a)
	p := b.get("/monitors/new?from=" + id)
	p.want(t, http.StatusOK, "Copy of orders")
	if strings.Contains(p.Body, "k3y-secret") || strings.Contains(p.Body, "pa55-secret") {
		t.Fatalf("the copy's form shows a secret:\n%s", p.Body)
	}
	for _, key := range []string{"config.headers", "config.basic_auth", "config.client_key"} {
		if f := fieldHTML(t, p.Body, key); !strings.Contains(f, `class="note"`) || !strings.Contains(f, "enter") {
			t.Fatalf("field %s has no note to enter the secret again:\n%s", key, f)
		}
	}
	if f := fieldHTML(t, p.Body, "config.url"); strings.Contains(f, `class="note"`) {
		t.Fatalf("a field without a secret has the note:\n%s", f)
	}
	form := formOf(t, p.Body, "monitor-form")
	for k, v := range form {
		if strings.Contains(v[0], manifest.Mask) {
			t.Fatalf("the copy's input %s shows a mask: %q", k, v[0])
		}
	}
	if form.Get("config.headers") != "Accept: application/json\r\nX-Api-Key: " || form.Get("config.basic_auth.username") != "watch" ||
		form.Get("config.basic_auth.password") != "" || form.Get("config.client_key") != "" || form.Get("config.client_cert") != strings.ReplaceAll(client.PEM(), "\n", "\r\n") {
		t.Fatalf("the copy's form: %v", form)
	}
	// Saved as shown, the key is missing for the certificate: refused,
	// and the notes are still there.
	r := b.post("/monitors/new", form)
	r.want(t, http.StatusUnprocessableEntity, `data-code="client_cert_invalid"`)
	if f := fieldHTML(t, r.Body, "config.client_key"); !strings.Contains(f, `class="note"`) {
		t.Fatalf("the refused copy lost its note:\n%s", f)
	}
	form.Set("config.headers", "Accept: application/json\nX-Api-Key: c0py-secret")
	form.Set("config.basic_auth.password", "c0py-pass")
	form.Set("config.client_key", client.KeyPEM(t))
	if s := b.post("/monitors/new", form); s.Status != http.StatusSeeOther {
		t.Fatalf("create the copy: %d\n%s", s.Status, s.Body)
	}
	cp := n.monitorUUID(a, "orders-copy")
	if h, pw, key := n.secretsOf(a, cp); h["X-Api-Key"] != "c0py-secret" || pw != "c0py-pass" || key != client.KeyPEM(t) {
		t.Fatalf("the copy's secrets: %v %q %q", h, pw, key)
	}
	if h, pw, _ := n.secretsOf(a, id); h["X-Api-Key"] != "k3y-secret" || pw != "pa55-secret" {
		t.Fatalf("the original's secrets changed: %v %q", h, pw)
	}
	orig, copied := n.manifestOf(a, id), n.manifestOf(a, cp)
	delete(orig, "name")
	delete(copied, "name")
	if asJSON(orig) != asJSON(copied) {
		t.Fatalf("the copy differs:\n%s\n%s", asJSON(orig), asJSON(copied))
	}
}
