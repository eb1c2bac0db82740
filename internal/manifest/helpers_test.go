package manifest

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// absent removes a key in with.
type absentT struct{}

var absent = absentT{}

func basePing() map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "ping", "name": "nightly-backup", "timeout_seconds": 600}
}

func baseHTTP() map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "http_check", "name": "Home page", "schedule": "5m",
		"config": map[string]any{"url": "https://example.com/", "expected_status": 200}}
}

func baseSSL() map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "ssl_check", "name": "example.com cert", "schedule": "1d",
		"config": map[string]any{"domain": "example.com"}}
}

// with returns a copy of m with the dotted path set to v (or removed for absent).
func with(m map[string]any, path string, v any) map[string]any {
	out := maps.Clone(m)
	key, rest, nested := strings.Cut(path, ".")
	if nested {
		sub, _ := out[key].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
		}
		out[key] = with(sub, rest, v)
		return out
	}
	if v == absent {
		delete(out, key)
	} else {
		out[key] = v
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parse parses v as JSON and returns the manifest and its codes.
func parse(t *testing.T, v any, opts Options) (Manifest, []string) {
	t.Helper()
	m, errs := Parse(mustJSON(t, v), opts)
	for _, e := range errs {
		if e.Code == "" || e.Message == "" {
			t.Errorf("error without code or message: %+v", e)
		}
	}
	return m, errs.Codes()
}

func sameCodes(got, want []string) bool {
	return slices.Equal(got, want) || (len(got) == 0 && len(want) == 0)
}

func baseTCP() map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "tcp_check", "name": "db port", "schedule": "1m",
		"config": map[string]any{"host": "db.internal", "port": 5432}}
}

func baseDNS() map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "dns_check", "name": "www record", "schedule": "5m",
		"config": map[string]any{"name": "www.example.com", "type": "A"}}
}
