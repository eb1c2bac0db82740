package manifest

import (
	"strings"
	"testing"
)

// Every option of checks for real endpoints, valid and invalid, with its
// code.
func TestParseOptionCodes(t *testing.T) {
	cert, key := testPair(t, "ca")
	_, otherKey := testPair(t, "other")
	big := strings.Repeat("a", MaxBody)
	manyHeaders := map[string]any{}
	for i := range MaxHeaders + 1 {
		manyHeaders["X-H"+strings.Repeat("a", i)] = "v"
	}
	tests := []struct {
		name string
		in   map[string]any
		want []string
	}{
		// headers
		{"headers", with(baseHTTP(), "config.headers", map[string]any{"Authorization": "Bearer x", "accept": "application/json", "Host": "a.test"}), nil},
		{"headers empty value", with(baseHTTP(), "config.headers", map[string]any{"X-Empty": ""}), nil},
		{"header newline", with(baseHTTP(), "config.headers", map[string]any{"X-A": "a\r\nInjected: 1"}), []string{CodeHeaderInvalid}},
		{"header NUL", with(baseHTTP(), "config.headers", map[string]any{"X-A": "a\x00"}), []string{CodeHeaderInvalid}},
		{"header tab ok", with(baseHTTP(), "config.headers", map[string]any{"X-A": "a\tb"}), nil},
		{"header name space", with(baseHTTP(), "config.headers", map[string]any{"X A": "a"}), []string{CodeHeaderInvalid}},
		{"header name colon", with(baseHTTP(), "config.headers", map[string]any{"X:A": "a"}), []string{CodeHeaderInvalid}},
		{"header name empty", with(baseHTTP(), "config.headers", map[string]any{"": "a"}), []string{CodeHeaderInvalid}},
		{"header name long", with(baseHTTP(), "config.headers", map[string]any{strings.Repeat("X", 257): "a"}), []string{CodeHeaderInvalid}},
		{"header value long", with(baseHTTP(), "config.headers", map[string]any{"X-A": strings.Repeat("v", 4097)}), []string{CodeHeaderInvalid}},
		{"header number", with(baseHTTP(), "config.headers", map[string]any{"X-A": 1}), []string{CodeHeaderInvalid}},
		{"header hop-by-hop", with(baseHTTP(), "config.headers", map[string]any{"transfer-encoding": "chunked"}), []string{CodeHeaderInvalid}},
		{"header twice", with(baseHTTP(), "config.headers", map[string]any{"x-a": "1", "X-A": "2"}), []string{CodeHeaderInvalid}},
		{"headers too many", with(baseHTTP(), "config.headers", manyHeaders), []string{CodeHeaderInvalid}},
		{"headers list", with(baseHTTP(), "config.headers", []string{"X-A: 1"}), []string{CodeHeaderInvalid}},
		// body
		{"body 64 KiB", with(baseHTTP(), "config.body", big), nil},
		{"body over 64 KiB", with(baseHTTP(), "config.body", big+"a"), []string{CodeBodyTooLarge}},
		{"body object", with(baseHTTP(), "config.body", map[string]any{"a": 1}), []string{CodeBodyInvalid}},
		// basic_auth
		{"basic auth", with(baseHTTP(), "config.basic_auth", map[string]any{"username": "u", "password": "p"}), nil},
		{"basic auth no password", with(baseHTTP(), "config.basic_auth", map[string]any{"username": "u"}), nil},
		{"basic auth no user", with(baseHTTP(), "config.basic_auth", map[string]any{"password": "p"}), []string{CodeBasicAuthInvalid}},
		{"basic auth colon", with(baseHTTP(), "config.basic_auth", map[string]any{"username": "a:b", "password": "p"}), []string{CodeBasicAuthInvalid}},
		{"basic auth newline", with(baseHTTP(), "config.basic_auth", map[string]any{"username": "a", "password": "p\n"}), []string{CodeBasicAuthInvalid}},
		{"basic auth long", with(baseHTTP(), "config.basic_auth", map[string]any{"username": "a", "password": strings.Repeat("p", 1025)}), []string{CodeBasicAuthInvalid}},
		{"basic auth string", with(baseHTTP(), "config.basic_auth", "u:p"), []string{CodeBasicAuthInvalid}},
		{"basic auth extra", with(baseHTTP(), "config.basic_auth", map[string]any{"username": "u", "realm": "r"}), []string{CodeBasicAuthInvalid}},
		{"basic auth and Authorization", with(with(baseHTTP(), "config.basic_auth", map[string]any{"username": "u"}), "config.headers", map[string]any{"authorization": "x"}), []string{CodeBasicAuthInvalid}},
		// follow_redirects, tls_skip_verify
		{"follow false", with(baseHTTP(), "config.follow_redirects", false), nil},
		{"follow string", with(baseHTTP(), "config.follow_redirects", "no"), []string{CodeFollowRedirectsInvalid}},
		{"skip verify", with(baseHTTP(), "config.tls_skip_verify", true), nil},
		{"skip verify number", with(baseHTTP(), "config.tls_skip_verify", 1), []string{CodeTLSSkipVerifyInvalid}},
		// expected_status lists and classes
		{"status class", with(baseHTTP(), "config.expected_status", "2xx"), nil},
		{"status class upper", with(baseHTTP(), "config.expected_status", "3XX"), nil},
		{"status list", with(baseHTTP(), "config.expected_status", []any{200, 204, "3xx"}), nil},
		{"status class 6xx", with(baseHTTP(), "config.expected_status", "6xx"), []string{CodeExpectedStatusInvalid}},
		{"status class 2x", with(baseHTTP(), "config.expected_status", "2x"), []string{CodeExpectedStatusInvalid}},
		{"status list empty", with(baseHTTP(), "config.expected_status", []any{}), []string{CodeExpectedStatusInvalid}},
		{"status list bad", with(baseHTTP(), "config.expected_status", []any{200, 700}), []string{CodeExpectedStatusInvalid}},
		{"status list repeat", with(baseHTTP(), "config.expected_status", []any{200, 200}), []string{CodeExpectedStatusInvalid}},
		{"status list long", with(baseHTTP(), "config.expected_status", []any{200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 307, 308}), []string{CodeExpectedStatusInvalid}},
		// content_absent and the assertion rule
		{"content absent alone", with(with(baseHTTP(), "config.expected_status", absent), "config.content_absent", "error"), nil},
		{"content absent long", with(baseHTTP(), "config.content_absent", strings.Repeat("a", 4097)), []string{CodeExpectedContentInvalid}},
		{"json path alone", with(with(baseHTTP(), "config.expected_status", absent), "config.json_path", []any{map[string]any{"path": "$.ok", "equals": true}}), nil},
		{"max response alone", with(with(baseHTTP(), "config.expected_status", absent), "config.max_response_ms", 500), []string{CodeHTTPAssertionRequired}},
		{"empty absent is no assertion", with(with(baseHTTP(), "config.expected_status", absent), "config.content_absent", ""), []string{CodeHTTPAssertionRequired}},
		// json_path
		{"json path", with(baseHTTP(), "config.json_path", []any{map[string]any{"path": "$.status", "equals": "ok"}, map[string]any{"path": "$.n[0]", "equals": 3}, map[string]any{"path": "$['a b']", "equals": nil}}), nil},
		{"json path bad path", with(baseHTTP(), "config.json_path", []any{map[string]any{"path": "status", "equals": "ok"}}), []string{CodeJSONPathInvalid}},
		{"json path wildcard", with(baseHTTP(), "config.json_path", []any{map[string]any{"path": "$.items[*]", "equals": "ok"}}), []string{CodeJSONPathInvalid}},
		{"json path no equals", with(baseHTTP(), "config.json_path", []any{map[string]any{"path": "$.a"}}), []string{CodeJSONPathInvalid}},
		{"json path object equals", with(baseHTTP(), "config.json_path", []any{map[string]any{"path": "$.a", "equals": map[string]any{}}}), []string{CodeJSONPathInvalid}},
		{"json path long equals", with(baseHTTP(), "config.json_path", []any{map[string]any{"path": "$.a", "equals": strings.Repeat("x", 1024)}}), []string{CodeJSONPathInvalid}},
		{"json path extra key", with(baseHTTP(), "config.json_path", []any{map[string]any{"path": "$.a", "equals": 1, "op": "lt"}}), []string{CodeJSONPathInvalid}},
		{"json path empty", with(baseHTTP(), "config.json_path", []any{}), []string{CodeJSONPathInvalid}},
		{"json path object", with(baseHTTP(), "config.json_path", map[string]any{"path": "$.a", "equals": 1}), []string{CodeJSONPathInvalid}},
		// max_response_ms
		{"max response", with(baseHTTP(), "config.max_response_ms", 10000), nil},
		{"max response over timeout", with(baseHTTP(), "config.max_response_ms", 10001), []string{CodeMaxResponseInvalid}},
		{"max response with timeout", with(with(baseHTTP(), "config.max_response_ms", 30000), "config.timeout", 30), nil},
		{"max response 0", with(baseHTTP(), "config.max_response_ms", 0), []string{CodeMaxResponseInvalid}},
		{"max response string", with(baseHTTP(), "config.max_response_ms", "1s"), []string{CodeMaxResponseInvalid}},
		// ca, client certificate
		{"ca", with(baseHTTP(), "config.ca", cert), nil},
		{"ca two", with(baseHTTP(), "config.ca", cert+cert), nil},
		{"ca not PEM", with(baseHTTP(), "config.ca", "MIIB..."), []string{CodeCAInvalid}},
		{"ca a key", with(baseHTTP(), "config.ca", key), []string{CodeCAInvalid}},
		{"ca garbage after", with(baseHTTP(), "config.ca", cert+"junk"), []string{CodeCAInvalid}},
		{"ca broken", with(baseHTTP(), "config.ca", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), []string{CodeCAInvalid}},
		{"ca number", with(baseSSL(), "config.ca", 1), []string{CodeCAInvalid}},
		{"client cert", with(with(baseHTTP(), "config.client_cert", cert), "config.client_key", key), nil},
		{"client cert masked key", with(with(baseHTTP(), "config.client_cert", cert), "config.client_key", Mask), nil},
		{"client cert without key", with(baseHTTP(), "config.client_cert", cert), []string{CodeClientCertInvalid}},
		{"client key without cert", with(baseHTTP(), "config.client_key", key), []string{CodeClientCertInvalid}},
		{"client key of another", with(with(baseHTTP(), "config.client_cert", cert), "config.client_key", otherKey), []string{CodeClientCertInvalid}},
		{"client cert not PEM", with(with(baseHTTP(), "config.client_cert", "x"), "config.client_key", key), []string{CodeClientCertInvalid}},
		// ssl_check port and ca
		{"ssl port", with(baseSSL(), "config.port", 8443), nil},
		{"ssl ca", with(baseSSL(), "config.ca", cert), nil},
		{"ssl port 0", with(baseSSL(), "config.port", 0), []string{CodePortInvalid}},
		{"ssl port 70000", with(baseSSL(), "config.port", 70000), []string{CodePortInvalid}},
		{"ssl port twice", with(with(baseSSL(), "config.port", 8443), "config.domain", "example.com:443"), []string{CodePortInvalid}},
		{"ssl http option", with(baseSSL(), "config.headers", map[string]any{}), []string{CodeFieldUnknown}},
		// tcp_check
		{"tcp", baseTCP(), nil},
		{"tcp ip", with(baseTCP(), "config.host", "10.0.0.5"), nil},
		{"tcp ipv6", with(baseTCP(), "config.host", "fd00::5"), nil},
		{"tcp send expect", with(with(with(baseTCP(), "config.send", "PING\r\n"), "config.expect", "+PONG"), "config.timeout", 5), nil},
		{"tcp no host", with(baseTCP(), "config.host", absent), []string{CodeHostInvalid}},
		{"tcp bad host", with(baseTCP(), "config.host", "db internal"), []string{CodeHostInvalid}},
		{"tcp host with port", with(baseTCP(), "config.host", "db:5432"), []string{CodeHostInvalid}},
		{"tcp url host", with(baseTCP(), "config.host", "tcp://db"), []string{CodeHostInvalid}},
		{"tcp port 0", with(baseTCP(), "config.port", 0), []string{CodePortInvalid}},
		{"tcp port 70000", with(baseTCP(), "config.port", 70000), []string{CodePortInvalid}},
		{"tcp port missing", with(baseTCP(), "config.port", absent), []string{CodePortInvalid}},
		{"tcp port string", with(baseTCP(), "config.port", "5432"), []string{CodePortInvalid}},
		{"tcp send long", with(baseTCP(), "config.send", strings.Repeat("a", 4097)), []string{CodeSendInvalid}},
		{"tcp expect number", with(baseTCP(), "config.expect", 1), []string{CodeExpectInvalid}},
		{"tcp timeout 61", with(baseTCP(), "config.timeout", 61), []string{CodeCheckTimeoutInvalid}},
		{"tcp url", with(baseTCP(), "config.url", "http://a/"), []string{CodeFieldUnknown}},
		// dns_check
		{"dns", baseDNS(), nil},
		{"dns default type", with(baseDNS(), "config.type", absent), nil},
		{"dns every type", with(with(baseDNS(), "config.type", "txt"), "config.expected", []string{"v=spf1 -all"}), nil},
		{"dns underscore", with(with(baseDNS(), "config.name", "_dmarc.example.com."), "config.type", "TXT"), nil},
		{"dns server", with(baseDNS(), "config.server", "1.1.1.1"), nil},
		{"dns server port", with(baseDNS(), "config.server", "ns1.example.com:5353"), nil},
		{"dns server v6", with(baseDNS(), "config.server", "[2001:db8::53]:53"), nil},
		{"dns expected", with(baseDNS(), "config.expected", []string{"192.0.2.1", "192.0.2.2"}), nil},
		{"dns mx expected", with(with(baseDNS(), "config.type", "MX"), "config.expected", []string{"mail.example.com", "10 mx2.example.com"}), nil},
		{"dns type SRV", with(baseDNS(), "config.type", "SRV"), []string{CodeDNSTypeInvalid}},
		{"dns type number", with(baseDNS(), "config.type", 1), []string{CodeDNSTypeInvalid}},
		{"dns no name", with(baseDNS(), "config.name", absent), []string{CodeHostInvalid}},
		{"dns bad name", with(baseDNS(), "config.name", "a..b"), []string{CodeHostInvalid}},
		{"dns bad server", with(baseDNS(), "config.server", "dns://x"), []string{CodeHostInvalid}},
		{"dns server port 0", with(baseDNS(), "config.server", "ns1.example.com:0"), []string{CodePortInvalid}},
		{"dns server port 70000", with(baseDNS(), "config.server", "1.1.1.1:70000"), []string{CodePortInvalid}},
		{"dns A expects v6", with(baseDNS(), "config.expected", []string{"2001:db8::1"}), []string{CodeDNSExpectedInvalid}},
		{"dns AAAA expects v4", with(with(baseDNS(), "config.type", "AAAA"), "config.expected", []string{"192.0.2.1"}), []string{CodeDNSExpectedInvalid}},
		{"dns CNAME expects ip", with(with(baseDNS(), "config.type", "CNAME"), "config.expected", []string{"a b"}), []string{CodeDNSExpectedInvalid}},
		{"dns MX bad pref", with(with(baseDNS(), "config.type", "MX"), "config.expected", []string{"x mail.example.com"}), []string{CodeDNSExpectedInvalid}},
		{"dns expected too many", with(baseDNS(), "config.expected", strings.Split(strings.Repeat("192.0.2.1,", 17), ",")[:17]), []string{CodeDNSExpectedInvalid}},
		{"dns expected string", with(baseDNS(), "config.expected", "192.0.2.1"), []string{CodeDNSExpectedInvalid}},
		{"dns bad type and expected", with(with(baseDNS(), "config.type", "SRV"), "config.expected", []string{"x"}), []string{CodeDNSTypeInvalid}},
		{"dns domain", with(baseDNS(), "config.domain", "a.com"), []string{CodeFieldUnknown}},
	}
	for _, tt := range tests {
		_, got := parse(t, tt.in, Options{})
		if !sameCodes(got, tt.want) {
			t.Errorf("%s: codes %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A problem with a secret never quotes it.
func TestErrorsNeverQuoteSecrets(t *testing.T) {
	in := with(baseHTTP(), "config.headers", map[string]any{"Authorization": "Bearer t0psecret\n"})
	in = with(in, "config.basic_auth", map[string]any{"username": "u", "password": "pa55word\x00"})
	_, errs := Parse(mustJSON(t, in), Options{})
	if len(errs) != 2 {
		t.Fatalf("errors %v", errs)
	}
	for _, e := range errs {
		if strings.Contains(e.Message, "t0psecret") || strings.Contains(e.Message, "pa55word") {
			t.Errorf("message quotes a secret: %s", e.Message)
		}
	}
}
