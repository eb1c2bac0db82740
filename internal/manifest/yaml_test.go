package manifest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestBundleFromYAML(t *testing.T) {
	in := `
manifest_version: 1
defaults: &http
  kind: http_check
  schedule: "*/5 * * * *"
monitors:
  - kind: ping
    name: nightly-backup
    timeout_seconds: 3600
    grace_seconds: 0x10
    tags: [db, "1"]
    enabled: false
    project: ~
  - <<: *http
    name: Home
    config: {url: "https://example.com/", expected_status: 200}
  - <<: *http
    schedule: 1h
    name: API
    config: {url: "https://api.example.com/", expected_content: 2024-01-01}
`
	js, err := BundleFromYAML([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	mons := got["monitors"].([]any)
	p := mons[0].(map[string]any)
	if p["timeout_seconds"] != 3600.0 || p["grace_seconds"] != 16.0 || p["enabled"] != false || p["project"] != nil ||
		!reflect.DeepEqual(p["tags"], []any{"db", "1"}) {
		t.Errorf("ping %v", p)
	}
	if h := mons[1].(map[string]any); h["kind"] != "http_check" || h["schedule"] != "*/5 * * * *" {
		t.Errorf("merge %v", h)
	}
	if h := mons[2].(map[string]any); h["schedule"] != "1h" || h["config"].(map[string]any)["expected_content"] != "2024-01-01" {
		t.Errorf("explicit keys must win over merged ones, timestamps stay text: %v", h)
	}
	// The defaults key is caught by ParseBundle, not lost in conversion.
	_, errs := ParseBundle(js, Options{})
	if !reflect.DeepEqual(errs.Get(KeyBundle).Codes(), []string{CodeFieldUnknown}) || len(errs) != 1 {
		t.Errorf("errors %+v", errs)
	}
}

func TestBundleFromYAMLErrors(t *testing.T) {
	for _, in := range []string{"a: [", "a: .inf", "? [1, 2]\n: x", "<<: 5"} {
		if js, err := BundleFromYAML([]byte(in)); err == nil {
			t.Errorf("BundleFromYAML(%q) = %s, want error", in, js)
		}
	}
	if js, err := BundleFromYAML([]byte(`{"a": [1, "x", null, true]}`)); err != nil || string(js) != `{"a":[1,"x",null,true]}` {
		t.Errorf("JSON input: %s %v", js, err)
	}
	if js, err := BundleFromYAML(nil); err != nil || string(js) != "null" {
		t.Errorf("empty: %s %v", js, err)
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	b := NewBundle([]Manifest{
		{Kind: KindPing, Name: "true", Enabled: true, Tags: []string{"123", "yes", "null", "", "a: b", "#x", "- y"},
			TimeoutSeconds: 60, GraceSeconds: ptr(int64(0)), DisplayName: "Multi\nline", Project: ptr("")},
		{Kind: KindHTTP, Name: "01", Schedule: "*/15 * * * *", Regions: []string{"eu"},
			Config: Config{URL: "https://example.com/?a=1&b=2", ExpectedStatus: ptr(204), ExpectedContent: "{\"ok\": true}"}},
		{Kind: KindSSL, Name: "1.5", Schedule: "7d", Config: Config{Domain: "example.com:8443", WarningDays: 10, AlertDays: 2}},
	})
	y, err := BundleToYAML(b)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(y), "manifest_version: 1\nmonitors:\n  - manifest_version: 1\n    kind: ping\n") {
		t.Errorf("not block style in field order:\n%s", y)
	}
	js, err := BundleFromYAML(y)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(b)
	var gotV, wantV any
	_ = json.Unmarshal(js, &gotV)
	_ = json.Unmarshal(want, &wantV)
	if !reflect.DeepEqual(gotV, wantV) {
		t.Errorf("round trip:\n%s\ngot  %s\nwant %s", y, js, want)
	}
}
