package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// full is an http_check with every option, secrets included.
func full(t *testing.T) Manifest {
	t.Helper()
	cert, key := testPair(t, "client")
	in := with(baseHTTP(), "config.headers", map[string]any{"x-auth-token": "Bearer t0psecret", "X-Api-Key": "k3y", "Accept": "application/json"})
	in = with(in, "config.basic_auth", map[string]any{"username": "watch", "password": "pa55"})
	in = with(in, "config.client_cert", cert)
	in = with(in, "config.client_key", key)
	in = with(in, "config.method", "POST")
	in = with(in, "config.body", `{"q": 1}`)
	in = with(in, "config.follow_redirects", false)
	in = with(in, "config.expected_status", []any{200, "3XX"})
	in = with(in, "config.content_absent", "maintenance")
	in = with(in, "config.json_path", []any{map[string]any{"path": `$["status"]`, "equals": "ok"}, map[string]any{"path": "$.n", "equals": 1.0}})
	in = with(in, "config.max_response_ms", 1000)
	in = with(in, "config.ca", cert)
	in = with(in, "config.tls_skip_verify", true)
	m, errs := Parse(mustJSON(t, in), Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return m
}

func TestCanonicalOptions(t *testing.T) {
	c := full(t).Config
	if _, ok := c.Headers["X-Auth-Token"]; !ok || c.Headers["Accept"] != "application/json" {
		t.Errorf("headers %v", c.Headers)
	}
	if c.ExpectedStatus != nil || !reflect.DeepEqual(c.ExpectedStatuses, []string{"200", "3xx"}) {
		t.Errorf("expected status %v %v", c.ExpectedStatus, c.ExpectedStatuses)
	}
	if c.Follows() || c.JSONPath[0].Path != "$.status" || string(c.JSONPath[0].Equals) != `"ok"` || string(c.JSONPath[1].Equals) != "1" {
		t.Errorf("follow %v, json path %+v", c.Follows(), c.JSONPath)
	}
	one, _ := Parse(mustJSON(t, with(baseHTTP(), "config.expected_status", []any{204})), Options{})
	if one.Config.ExpectedStatus == nil || *one.Config.ExpectedStatus != 204 || one.Config.ExpectedStatuses != nil {
		t.Errorf("[204] = %v %v", one.Config.ExpectedStatus, one.Config.ExpectedStatuses)
	}
	def, _ := Parse(mustJSON(t, with(baseHTTP(), "config.follow_redirects", true)), Options{})
	if def.Config.FollowRedirects != nil || !Equal(def, Canonical(Manifest{Kind: KindHTTP, Name: "Home page", Enabled: true, Schedule: "5m", Config: Config{URL: "https://example.com/", ExpectedStatus: new(200)}})) {
		t.Errorf("follow_redirects true is the default: %+v", def.Config)
	}
	dns, _ := Parse(mustJSON(t, with(with(baseDNS(), "config.name", "WWW.Example.com."), "config.type", "aaaa")), Options{})
	if dns.Config.Name != "www.example.com" || dns.Config.Type != "AAAA" || dns.Config.Timeout != 10 {
		t.Errorf("dns canonical %+v", dns.Config)
	}
	noType, _ := Parse(mustJSON(t, with(baseDNS(), "config.type", absent)), Options{})
	tcp, _ := Parse(mustJSON(t, with(baseTCP(), "config.host", "DB.internal")), Options{})
	if noType.Config.Type != "A" || tcp.Config.Host != "db.internal" || tcp.Config.Timeout != 10 {
		t.Errorf("defaults: dns %+v, tcp %+v", noType.Config, tcp.Config)
	}
}

// The JSON of every kind with its options parses back to itself, and the
// Go client's decoding reads it back too; so does the YAML of an export.
func TestOptionsRoundTrip(t *testing.T) {
	withServer := with(with(baseDNS(), "config.server", "10.0.0.53:5353"), "config.expected", []string{"192.0.2.1"})
	tcp := with(with(baseTCP(), "config.send", "PING\r\n"), "config.expect", "PONG")
	ssl := with(with(baseSSL(), "config.port", 8443), "config.ca", full(t).Config.CA)
	class := with(with(baseHTTP(), "config.expected_status", "2xx"), "name", "Status page")
	ms := []Manifest{full(t)}
	for _, in := range []map[string]any{withServer, tcp, ssl, class} {
		m, errs := Parse(mustJSON(t, in), Options{})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		js := mustJSON(t, m)
		again, errs := Parse(js, Options{})
		if len(errs) > 0 || !reflect.DeepEqual(again, m) {
			t.Errorf("%s: JSON %s parses to %+v, %v", m.Kind, js, again.Config, errs)
		}
		var decoded Manifest
		if err := json.Unmarshal(js, &decoded); err != nil || !Equal(decoded, m) {
			t.Errorf("%s: decoded %+v, %v; diff %v", m.Kind, decoded.Config, err, Diff(m, decoded))
		}
	}
	if js := string(mustJSON(t, ms[4])); !strings.Contains(js, `"expected_status":"2xx"`) {
		t.Errorf("a class is written as given: %s", js)
	}
	y, err := BundleToYAML(NewBundle(ms))
	if err != nil {
		t.Fatal(err)
	}
	back, err := BundleFromYAML(y)
	if err != nil {
		t.Fatal(err)
	}
	b, errs := ParseBundle(back, Options{})
	if len(errs) > 0 || len(b.Monitors) != len(ms) {
		t.Fatalf("YAML back: %v\n%s", errs, y)
	}
	for _, m := range b.Monitors {
		found := false
		for _, orig := range ms {
			found = found || Equal(orig, m)
		}
		if !found {
			t.Errorf("YAML lost something of %s %s", m.Kind, m.Name)
		}
	}
}

func TestMasked(t *testing.T) {
	m := full(t)
	shown := Masked(m)
	c := shown.Config
	if c.Headers["X-Auth-Token"] != Mask || c.Headers["X-Api-Key"] != Mask || c.Headers["Accept"] != "application/json" {
		t.Errorf("headers %v", c.Headers)
	}
	if c.BasicAuth.Username != "watch" || c.BasicAuth.Password != Mask || c.ClientKey != Mask || c.ClientCert != m.Config.ClientCert {
		t.Errorf("basic auth %+v, client key %q", c.BasicAuth, c.ClientKey)
	}
	// The original is untouched.
	if m.Config.Headers["X-Auth-Token"] != "Bearer t0psecret" || m.Config.BasicAuth.Password != "pa55" {
		t.Errorf("Masked changed its argument: %+v", m.Config)
	}
	js := string(mustJSON(t, shown))
	for _, secret := range []string{"t0psecret", "k3y", "pa55", "PRIVATE KEY"} {
		if strings.Contains(js, secret) {
			t.Errorf("the masked JSON shows %q", secret)
		}
	}
	for name, secret := range map[string]bool{"Authorization": true, "Proxy-Authorization": true, "Cookie": true, "X-Api-Key": true,
		"X-Auth-Token": true, "X-Session-Id": true, "Accept": false, "Content-Type": false, "X-Request-Id": false, "Host": false} {
		if SecretHeader(name) != secret {
			t.Errorf("SecretHeader(%s) = %v", name, !secret)
		}
	}
}

// A masked secret sent back keeps the stored one: export then apply
// changes nothing. A masked secret with nothing stored is refused.
func TestResolveKeepsSecrets(t *testing.T) {
	stored := full(t)
	back, errs := Parse(mustJSON(t, Masked(stored)), Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	resolved := Resolve(stored, back)
	if d := Diff(stored, resolved); len(d) != 0 || len(CheckSecrets(resolved)) != 0 {
		t.Fatalf("masked round trip: diff %v, %v", d, CheckSecrets(resolved))
	}
	if resolved.Config.Headers["X-Auth-Token"] != "Bearer t0psecret" || resolved.Config.BasicAuth.Password != "pa55" || resolved.Config.ClientKey != stored.Config.ClientKey {
		t.Fatalf("secrets not restored: %+v", resolved.Config)
	}

	// A new secret is a change, shown masked on both sides.
	changed := Masked(stored)
	changed.Config.Headers = map[string]string{"X-Auth-Token": "Bearer n3w", "X-Api-Key": Mask, "Accept": "application/json"}
	resolved = Resolve(stored, changed)
	d := Diff(stored, resolved)
	if len(d) != 1 || !reflect.DeepEqual(d["config.headers"][1], map[string]string{"X-Auth-Token": Mask, "X-Api-Key": Mask, "Accept": "application/json"}) {
		t.Fatalf("diff %v", d)
	}
	if strings.Contains(string(mustJSON(t, d)), "n3w") || strings.Contains(string(mustJSON(t, d)), "t0psecret") {
		t.Fatalf("the diff shows a secret: %v", d)
	}

	// Creating (nothing stored), or a header new to the monitor: refused.
	created := Resolve(Manifest{}, Masked(stored))
	codes := CheckSecrets(created).Codes()
	if !sameCodes(codes, []string{CodeSecretMasked, CodeSecretMasked, CodeSecretMasked, CodeSecretMasked}) {
		t.Fatalf("create with masks: %v", CheckSecrets(created))
	}
	renamed := Masked(stored)
	renamed.Config.Headers = map[string]string{"X-Other-Token": Mask}
	if errs := CheckSecrets(Resolve(stored, renamed)); !sameCodes(errs.Codes(), []string{CodeSecretMasked}) || errs[0].Field != "config.headers" {
		t.Fatalf("a masked header with none stored: %v", errs)
	}
	// A changed certificate with the stored key: the pair no longer fits.
	otherCert, _ := testPair(t, "other")
	swapped := Masked(stored)
	swapped.Config.ClientCert = otherCert
	if errs := CheckSecrets(Resolve(stored, swapped)); !sameCodes(errs.Codes(), []string{CodeClientCertInvalid}) {
		t.Fatalf("a new certificate with the stored key: %v", errs)
	}
}

func TestBundleCheckNameSpace(t *testing.T) {
	entry := func(kind, name string, cfg map[string]any) map[string]any {
		return map[string]any{"kind": kind, "name": name, "schedule": "5m", "config": cfg}
	}
	raw := mustJSON(t, map[string]any{"manifest_version": 1, "monitors": []any{
		entry("tcp_check", "db", map[string]any{"host": "db", "port": 5432}),
		entry("dns_check", "db", map[string]any{"name": "db.example.com"}),
		entry("dns_check", "www", map[string]any{"name": "www.example.com"}),
		entry("dns_check", "www", map[string]any{"name": "www.example.com", "type": "AAAA"}),
	}})
	_, errs := ParseBundle(raw, Options{})
	if !sameCodes(errs.Get(EntryKey(1)).Codes(), []string{CodeNameTakenByOtherKind}) || !sameCodes(errs.Get(EntryKey(3)).Codes(), []string{CodeDuplicateEntry}) || len(errs) != 2 {
		t.Fatalf("errors %+v", errs)
	}
}
