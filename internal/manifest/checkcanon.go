package manifest

import (
	"encoding/json"
	"maps"
	"net/textproto"
	"strconv"
	"strings"
)

// canonicalHTTP is the canonical config of an http_check: method upper
// case (GET by default), timeout 10 by default, a single expected status
// in ExpectedStatus and a class or list in ExpectedStatuses (classes lower
// case), header names canonical (Authorization), follow_redirects only
// when false, the other kinds' keys cleared. Maps, slices and pointers
// are copies.
func canonicalHTTP(c Config) Config {
	out := Config{
		URL: c.URL, Method: strings.ToUpper(c.Method), Timeout: c.Timeout,
		ExpectedContent: c.ExpectedContent, ContentAbsent: c.ContentAbsent, Body: c.Body,
		MaxResponseMs: c.MaxResponseMs, CA: c.CA, TLSSkipVerify: c.TLSSkipVerify,
		ClientCert: c.ClientCert, ClientKey: c.ClientKey,
	}
	if out.Method == "" {
		out.Method = DefaultMethod
	}
	if out.Timeout == 0 {
		out.Timeout = DefaultCheckTimeout
	}
	out.ExpectedStatus = clonePtr(c.ExpectedStatus)
	if len(c.ExpectedStatuses) > 0 {
		list := make([]string, len(c.ExpectedStatuses))
		for i, s := range c.ExpectedStatuses {
			list[i] = strings.ToLower(s)
		}
		if n, err := strconv.Atoi(list[0]); err == nil && len(list) == 1 {
			out.ExpectedStatus = &n
		} else {
			out.ExpectedStatus, out.ExpectedStatuses = nil, list
		}
	}
	if len(c.Headers) > 0 {
		out.Headers = make(map[string]string, len(c.Headers))
		for name, v := range c.Headers {
			out.Headers[textproto.CanonicalMIMEHeaderKey(name)] = v
		}
	}
	if c.BasicAuth != nil {
		a := *c.BasicAuth
		out.BasicAuth = &a
	}
	if c.FollowRedirects != nil && !*c.FollowRedirects {
		out.FollowRedirects = new(false)
	}
	for _, a := range c.JSONPath {
		out.JSONPath = append(out.JSONPath, JSONPathAssertion{Path: a.Path, Equals: append(json.RawMessage(nil), a.Equals...)})
	}
	return out
}

// Follows reports whether an http_check follows redirects (the default).
func (c Config) Follows() bool {
	return c.FollowRedirects == nil || *c.FollowRedirects
}

func cloneList(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return append([]string(nil), l...)
}

// expectedStatusValue is expected_status as JSON shows it: an integer, a
// class string, or a list of integers and class strings; nil when unset.
func expectedStatusValue(c Config) any {
	if len(c.ExpectedStatuses) == 0 {
		if c.ExpectedStatus == nil {
			return nil
		}
		return int64(*c.ExpectedStatus)
	}
	items := make([]any, len(c.ExpectedStatuses))
	for i, s := range c.ExpectedStatuses {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			items[i] = n
		} else {
			items[i] = s
		}
	}
	if len(items) == 1 {
		return items[0]
	}
	return items
}

func headersValue(h map[string]string) any {
	if len(h) == 0 {
		return nil
	}
	return maps.Clone(h)
}

func basicAuthValue(a *BasicAuth) any {
	if a == nil {
		return nil
	}
	return map[string]string{"username": a.Username, "password": a.Password}
}

func boolPtrOrNil(p *bool) any {
	if p == nil {
		return nil
	}
	return *p
}

func trueOrNil(b bool) any {
	if !b {
		return nil
	}
	return true
}

func listOrNil(l []string) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

// jsonPathValue is json_path as JSON shows it: a list of {path, equals}
// with equals decoded.
func jsonPathValue(list []JSONPathAssertion) any {
	if len(list) == 0 {
		return nil
	}
	out := make([]any, len(list))
	for i, a := range list {
		var eq any
		_ = json.Unmarshal(a.Equals, &eq)
		out[i] = map[string]any{"path": a.Path, "equals": eq}
	}
	return out
}
