package manifest

import (
	"bytes"
	"encoding/json"
	"net/textproto"
	"sort"
	"strconv"
	"strings"

	"lookout/internal/jsonpath"
)

// Bounds of the options of an http_check (and the ca of an ssl_check).
const (
	MaxHeaders       = 32
	MaxHeaderName    = 256
	MaxHeaderValue   = 4096
	MaxBody          = 64 << 10 // bytes
	MaxUsername      = 256
	MaxPassword      = 1024
	MaxStatuses      = 16
	MaxJSONPath      = 16
	MaxEquals        = 1024 // bytes of an equals value's JSON text
	MaxPEM           = 32 << 10
	MaxResponseLimit = MaxCheckTimeout * 1000
)

// hopByHop are headers a check may not set: the transport writes them
// from the request itself.
var hopByHop = []string{"Connection", "Content-Length", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// httpOptions decodes the options of an http_check beyond url, method,
// timeout, expected_status and expected_content, then checks that the
// check asserts something.
func (d *decoder) httpOptions(c *Config) {
	c.ContentAbsent = d.content("content_absent")
	c.Headers = d.headers()
	if s, ok := d.str("body", CodeBodyInvalid); ok {
		if len(s) > MaxBody {
			d.add("body", CodeBodyTooLarge, "must be at most %d bytes (64 KiB), got %d", MaxBody, len(s))
		}
		c.Body = s
	}
	c.BasicAuth = d.basicAuth()
	if c.BasicAuth != nil && c.Headers["Authorization"] != "" {
		d.add("basic_auth", CodeBasicAuthInvalid, "and an Authorization header exclude each other")
	}
	c.FollowRedirects = d.boolean("follow_redirects", CodeFollowRedirectsInvalid)
	c.JSONPath = d.jsonPath()
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultCheckTimeout
	}
	if n, ok := d.integer("max_response_ms", 1, MaxResponseLimit, CodeMaxResponseInvalid, false); ok {
		if n > int64(timeout)*1000 {
			d.add("max_response_ms", CodeMaxResponseInvalid, "(%d) must not exceed the timeout (%d s): a slower answer is a timeout", n, timeout)
		}
		c.MaxResponseMs = int(n)
	}
	c.CA = d.ca()
	if v := d.boolean("tls_skip_verify", CodeTLSSkipVerifyInvalid); v != nil {
		c.TLSSkipVerify = *v
	}
	c.ClientCert, c.ClientKey = d.clientCert()

	// A value of the wrong type is already reported; only a true absence is reported here.
	content, _ := d.raw("expected_content")
	absent, _ := d.raw("content_absent")
	if !d.has("expected_status") && emptyString(content) && emptyString(absent) && !d.has("json_path") {
		d.add("expected_status", CodeHTTPAssertionRequired, "or a non-empty expected_content, content_absent or json_path is required")
	}
}

func emptyString(r json.RawMessage) bool {
	return r == nil || string(bytes.TrimSpace(r)) == `""`
}

// content decodes expected_content or content_absent: at most
// MaxExpectedContent characters.
func (d *decoder) content(key string) string {
	s, ok := d.str(key, CodeExpectedContentInvalid)
	if !ok {
		return ""
	}
	if n := runes(s); n > MaxExpectedContent {
		d.add(key, CodeExpectedContentInvalid, "must be at most %d characters long, got %d", MaxExpectedContent, n)
	}
	return s
}

// expectedStatus decodes expected_status: a status, a class ("2xx"), or
// a list of 1 to MaxStatuses of them, none repeated.
func (d *decoder) expectedStatus(c *Config) {
	r, ok := d.raw("expected_status")
	if !ok {
		return
	}
	items := []json.RawMessage{r}
	if t := bytes.TrimSpace(r); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(r, &items); err != nil || len(items) < 1 || len(items) > MaxStatuses {
			d.add("expected_status", CodeExpectedStatusInvalid, "must be a status (100 to 599), a class (\"2xx\") or a list of 1 to %d of them, got %s", MaxStatuses, excerpt(r))
			return
		}
	}
	var out []string
	for i, it := range items {
		s, ok := statusItem(it)
		switch {
		case !ok && len(items) == 1:
			d.add("expected_status", CodeExpectedStatusInvalid, "must be an integer from %d to %d or a class such as \"2xx\", got %s", MinStatus, MaxStatus, excerpt(it))
			return
		case !ok:
			d.add("expected_status", CodeExpectedStatusInvalid, "item %d must be an integer from %d to %d or a class such as \"2xx\", got %s", i, MinStatus, MaxStatus, excerpt(it))
			return
		case contains(out, s):
			d.add("expected_status", CodeExpectedStatusInvalid, "item %d repeats %s", i, s)
			return
		}
		out = append(out, s)
	}
	if n, err := strconv.Atoi(out[0]); err == nil && len(out) == 1 {
		c.ExpectedStatus = &n
		return
	}
	c.ExpectedStatuses = out
}

// statusItem reads one status (an integer 100 to 599) or class ("1xx" to
// "5xx", any case) as its canonical string.
func statusItem(r json.RawMessage) (string, bool) {
	if n, ok := parseInt(r); ok {
		return strconv.FormatInt(n, 10), n >= MinStatus && n <= MaxStatus
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		return "", false
	}
	s = strings.ToLower(s)
	return s, len(s) == 3 && s[0] >= '1' && s[0] <= '5' && s[1:] == "xx"
}

// headers decodes headers: an object of at most MaxHeaders names (HTTP
// tokens, no hop-by-hop header, none repeated in another case) to values
// without control characters. Names are stored canonical (Authorization).
func (d *decoder) headers() map[string]string {
	r, ok := d.raw("headers")
	if !ok {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r, &raw); err != nil || raw == nil {
		d.add("headers", CodeHeaderInvalid, "must be an object of header names to string values, got %s", excerpt(r))
		return nil
	}
	if len(raw) > MaxHeaders {
		d.add("headers", CodeHeaderInvalid, "may hold at most %d headers, got %d", MaxHeaders, len(raw))
		return nil
	}
	names := make([]string, 0, len(raw))
	for name := range raw {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]string{}
	for _, name := range names {
		canon := textproto.CanonicalMIMEHeaderKey(name)
		var v string
		switch err := json.Unmarshal(raw[name], &v); {
		case len(name) < 1 || len(name) > MaxHeaderName || !headerToken(name):
			d.add("headers", CodeHeaderInvalid, "name %s must be 1 to %d letters, digits or !#$%%&'*+-.^_`|~", quote(name), MaxHeaderName)
		case contains(hopByHop, canon):
			d.add("headers", CodeHeaderInvalid, "%s is set by the connection itself and may not be given", canon)
		case err != nil:
			d.add("headers", CodeHeaderInvalid, "%s must be a string", canon)
		case len(v) > MaxHeaderValue:
			d.add("headers", CodeHeaderInvalid, "%s must be at most %d bytes long, got %d", canon, MaxHeaderValue, len(v))
		case !headerValue(v):
			// The value itself is not quoted: it may be a secret.
			d.add("headers", CodeHeaderInvalid, "%s may not contain a line break or another control character", canon)
		default:
			if _, dup := out[canon]; dup {
				d.add("headers", CodeHeaderInvalid, "%s is given twice (header names ignore case)", canon)
			}
			out[canon] = v
		}
	}
	return out
}

// headerToken reports whether s is an HTTP token (RFC 9110 tchar).
func headerToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// headerValue reports whether s has no control character but tab.
func headerValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// basicAuth decodes basic_auth: {username, password}.
func (d *decoder) basicAuth() *BasicAuth {
	if !d.has("basic_auth") {
		return nil
	}
	sub := d.object("basic_auth")
	if sub.notObject {
		d.add("basic_auth", CodeBasicAuthInvalid, "must be an object {username, password}")
		return nil
	}
	a := &BasicAuth{}
	if s, ok := sub.str("username", CodeBasicAuthInvalid); ok {
		if n := runes(s); n < 1 || n > MaxUsername || strings.Contains(s, ":") || !headerValue(s) {
			sub.add("username", CodeBasicAuthInvalid, "must be 1 to %d characters, without a colon or a control character", MaxUsername)
		}
		a.Username = s
	} else if !sub.has("username") {
		sub.missing("username", CodeBasicAuthInvalid, "a user name")
	}
	if s, ok := sub.str("password", CodeBasicAuthInvalid); ok {
		if n := runes(s); n > MaxPassword || !headerValue(s) {
			sub.add("password", CodeBasicAuthInvalid, "must be at most %d characters, without a control character", MaxPassword)
		}
		a.Password = s
	}
	sub.unknownCoded([]string{"username", "password"}, CodeBasicAuthInvalid)
	return a
}

// boolean decodes an optional boolean; nil when absent or invalid.
func (d *decoder) boolean(key, code string) *bool {
	r, ok := d.raw(key)
	if !ok {
		return nil
	}
	var v bool
	if err := json.Unmarshal(r, &v); err != nil {
		d.add(key, code, "must be true or false, got %s", excerpt(r))
		return nil
	}
	return &v
}

// jsonPath decodes json_path: 1 to MaxJSONPath assertions {path, equals},
// each path in the grammar of internal/jsonpath (stored canonical), each
// equals a JSON string, number, boolean or null.
func (d *decoder) jsonPath() []JSONPathAssertion {
	r, ok := d.raw("json_path")
	if !ok {
		return nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(r, &items); err != nil || len(items) < 1 || len(items) > MaxJSONPath {
		d.add("json_path", CodeJSONPathInvalid, "must be a list of 1 to %d assertions {path, equals}, got %s", MaxJSONPath, excerpt(r))
		return nil
	}
	out := make([]JSONPathAssertion, 0, len(items))
	for i, it := range items {
		var a JSONPathAssertion
		var path string
		if rp, ok := it["path"]; !ok || json.Unmarshal(rp, &path) != nil {
			d.add("json_path", CodeJSONPathInvalid, "item %d needs a path, a string such as \"$.status\"", i)
		} else if p, err := jsonpath.Parse(path); err != nil {
			d.add("json_path", CodeJSONPathInvalid, "item %d: the path %s %v", i, quote(path), err)
		} else {
			a.Path = p.String()
		}
		eq, ok := it["equals"]
		switch {
		case !ok:
			d.add("json_path", CodeJSONPathInvalid, "item %d needs equals, a JSON string, number, boolean or null", i)
		case !jsonScalar(eq):
			d.add("json_path", CodeJSONPathInvalid, "item %d: equals must be a JSON string, number, boolean or null, got %s", i, excerpt(eq))
		case len(eq) > MaxEquals:
			d.add("json_path", CodeJSONPathInvalid, "item %d: equals must be at most %d bytes of JSON, got %d", i, MaxEquals, len(eq))
		default:
			var buf bytes.Buffer
			_ = json.Compact(&buf, eq)
			a.Equals = buf.Bytes()
		}
		var extra []string
		for k := range it {
			if k != "path" && k != "equals" {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
		for _, k := range extra {
			d.add("json_path", CodeJSONPathInvalid, "item %d: %s is not a key of an assertion (path, equals)", i, quote(k))
		}
		out = append(out, a)
	}
	return out
}

// jsonScalar reports whether r is a JSON string, number, true, false or
// null.
func jsonScalar(r json.RawMessage) bool {
	t := bytes.TrimSpace(r)
	return len(t) > 0 && t[0] != '{' && t[0] != '[' && json.Valid(t)
}
