package manifest

import (
	"encoding/json"
	"reflect"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestCanonicalClearsOtherKinds(t *testing.T) {
	m := Manifest{Kind: KindHTTP, Name: "x", Enabled: true, TimeoutSeconds: 5, GraceSeconds: ptr(int64(1)),
		DisplayName: "d", Project: ptr("p"), Schedule: "5m", Regions: []string{},
		Config: Config{URL: "https://a/", Method: "get", ExpectedStatus: ptr(200), Domain: "a", WarningDays: 3}}
	got := Canonical(m)
	want := Manifest{ManifestVersion: 1, Kind: KindHTTP, Name: "x", Enabled: true, Tags: []string{}, Schedule: "5m", Timezone: "UTC",
		Config: Config{URL: "https://a/", Method: "GET", Timeout: 10, ExpectedStatus: ptr(200)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Canonical =\n%+v\nwant\n%+v", got, want)
	}
	p := Canonical(Manifest{Kind: KindPing, Name: "x", TimeoutSeconds: 5, Schedule: "5m", Regions: []string{"eu"}, Config: Config{URL: "u"}})
	if p.Schedule != "5m" || p.Timezone != "UTC" || p.Regions != nil || !reflect.DeepEqual(p.Config, Config{}) || p.TimeoutSeconds != 5 {
		t.Errorf("ping not cleared: %+v", p)
	}
	js, _ := json.Marshal(p)
	if string(js) != `{"manifest_version":1,"kind":"ping","name":"x","enabled":false,"tags":[],"timeout_seconds":5,"schedule":"5m","timezone":"UTC"}` {
		t.Errorf("ping JSON %s", js)
	}
}

func TestEqual(t *testing.T) {
	a, _ := Parse(mustJSON(t, with(baseHTTP(), "config.expected_content", "")), Options{})
	b, _ := Parse(mustJSON(t, with(with(with(baseHTTP(), "config.method", "GET"), "config.timeout", 10), "tags", []string{})), Options{})
	b.UUID = "u-1"
	if !Equal(a, b) {
		t.Errorf("defaults, empty content, empty tags and uuid should compare equal: %v", Diff(a, b))
	}
	c := a
	c.Tags = []string{"x", "y"}
	d := a
	d.Tags = []string{"y", "x"}
	if Equal(c, d) {
		t.Error("tag order is kept, so it counts")
	}
	e, f := a, a
	e.Project, f.Project = nil, ptr("")
	if !Equal(e, f) {
		t.Error("nil and empty project should be equal")
	}
	if Equal(a, Manifest{}) {
		t.Error("a manifest equals the zero manifest")
	}
}

func TestDiff(t *testing.T) {
	old, _ := Parse(mustJSON(t, with(basePing(), "tags", []string{"a"})), Options{})
	upd, _ := Parse(mustJSON(t, with(with(with(with(basePing(), "timeout_seconds", 60), "display_name", "Nightly"),
		"grace_seconds", 0), "enabled", false)), Options{})
	want := map[string][2]any{
		"timeout_seconds": {int64(600), int64(60)},
		"display_name":    {nil, "Nightly"},
		"grace_seconds":   {nil, int64(0)},
		"enabled":         {true, false},
		"tags":            {[]string{"a"}, []string{}},
	}
	if got := Diff(old, upd); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff =\n%#v\nwant\n%#v", got, want)
	}

	h1, _ := Parse(mustJSON(t, baseHTTP()), Options{})
	h2, _ := Parse(mustJSON(t, with(with(with(with(baseHTTP(), "config.url", "https://example.org/"), "config.expected_status", absent),
		"config.expected_content", "OK"), "regions", []string{"eu"})), Options{})
	want = map[string][2]any{
		"config.url":              {"https://example.com/", "https://example.org/"},
		"config.expected_status":  {int64(200), nil},
		"config.expected_content": {nil, "OK"},
		"regions":                 {nil, []string{"eu"}},
	}
	if got := Diff(h1, h2); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff =\n%#v\nwant\n%#v", got, want)
	}
	if _, err := json.Marshal(Diff(h1, h2)); err != nil {
		t.Errorf("diff is not JSON-ready: %v", err)
	}
	if d := Diff(h1, h1); len(d) != 0 {
		t.Errorf("self diff %v", d)
	}
}

func TestResolveProject(t *testing.T) {
	stored := Manifest{UUID: "u", Kind: KindPing, Name: "x", TimeoutSeconds: 5, Project: ptr("infra")}
	absentProject := Manifest{Kind: KindPing, Name: "x", TimeoutSeconds: 5}
	if r := Resolve(stored, absentProject); r.Project == nil || *r.Project != "infra" || r.UUID != "u" || !Equal(stored, r) {
		t.Errorf("absent project must keep the stored one: %+v", r)
	}
	cleared := absentProject
	cleared.Project = ptr("")
	if r := Resolve(stored, cleared); r.Project != nil {
		t.Errorf("empty project must clear: %v", *r.Project)
	}
	if d := Diff(stored, Resolve(stored, cleared)); !reflect.DeepEqual(d, map[string][2]any{"project": {"infra", nil}}) {
		t.Errorf("Diff %v", d)
	}
	moved := absentProject
	moved.Project = ptr("apps")
	if r := Resolve(Manifest{}, moved); *r.Project != "apps" || r.UUID != "" {
		t.Errorf("create: %+v", r)
	}
}

func TestConfirmRegionsCanonical(t *testing.T) {
	m := Manifest{Kind: KindHTTP, Name: "x", Schedule: "1m", Regions: []string{"eu", "us"}}
	if c := Canonical(m); c.ConfirmRegions != 1 {
		t.Fatalf("canonical confirm_regions %d, want 1", c.ConfirmRegions)
	}
	if c := Canonical(Manifest{Kind: KindHTTP, Name: "x", Schedule: "1m", ConfirmRegions: 2}); c.ConfirmRegions != 0 {
		t.Fatalf("without regions: %d, want 0", c.ConfirmRegions)
	}
	two := m
	two.ConfirmRegions = 2
	d := Diff(m, two)
	if len(d) != 1 || d["confirm_regions"] != [2]any{nil, int64(2)} {
		t.Fatalf("Diff = %v", d)
	}
	one := m
	one.ConfirmRegions = 1
	if !Equal(m, one) {
		t.Fatal("confirm_regions 1 differs from unset")
	}
}
