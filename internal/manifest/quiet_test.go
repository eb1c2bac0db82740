package manifest

import (
	"strings"
	"testing"
)

// TestQuietFieldCodes: failure_threshold (checks, 1-10) and
// remind_every_seconds (every kind, 300-604800) with their codes.
func TestQuietFieldCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]any
		want []string
	}{
		{"threshold 1", with(baseHTTP(), "failure_threshold", 1), nil},
		{"threshold 10", with(baseSSL(), "failure_threshold", 10), nil},
		{"threshold 0", with(baseHTTP(), "failure_threshold", 0), []string{CodeFailureThresholdOutOfRange}},
		{"threshold 11", with(baseHTTP(), "failure_threshold", 11), []string{CodeFailureThresholdOutOfRange}},
		{"threshold string", with(baseHTTP(), "failure_threshold", "2"), []string{CodeFailureThresholdOutOfRange}},
		{"threshold on a ping", with(basePing(), "failure_threshold", 2), []string{CodeFieldUnknown}},
		{"remind 300", with(basePing(), "remind_every_seconds", 300), nil},
		{"remind 604800", with(baseHTTP(), "remind_every_seconds", 604800), nil},
		{"remind 299", with(basePing(), "remind_every_seconds", 299), []string{CodeRemindEveryOutOfRange}},
		{"remind 604801", with(baseSSL(), "remind_every_seconds", 604801), []string{CodeRemindEveryOutOfRange}},
		{"remind null", with(basePing(), "remind_every_seconds", nil), nil},
	} {
		if _, got := parse(t, tc.in, Options{}); !sameCodes(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestQuietFieldsDiff: the default threshold (1) compares as unset; a
// reminder period shows in the diff.
func TestQuietFieldsDiff(t *testing.T) {
	a, _ := parse(t, baseHTTP(), Options{})
	b, _ := parse(t, with(baseHTTP(), "failure_threshold", 1), Options{})
	if d := Diff(a, b); len(d) != 0 {
		t.Fatalf("threshold 1 against unset: %v", d)
	}
	c, _ := parse(t, with(with(baseHTTP(), "failure_threshold", 3), "remind_every_seconds", 3600), Options{})
	d := Diff(a, c)
	if len(d) != 2 || d["failure_threshold"] != [2]any{nil, int64(3)} || d["remind_every_seconds"] != [2]any{nil, int64(3600)} {
		t.Fatalf("diff %v", d)
	}
}

// TestDependsOnCodes: the shape of depends_on, per manifest.
func TestDependsOnCodes(t *testing.T) {
	dep := func(kind, name string) map[string]any { return map[string]any{"kind": kind, "name": name} }
	many := make([]any, MaxDependencies+1)
	for i := range many {
		many[i] = dep("ping", "job-"+string(rune('a'+i)))
	}
	for _, tc := range []struct {
		name string
		in   map[string]any
		want []string
	}{
		{"ok", with(basePing(), "depends_on", []any{dep("http_check", "Database (EU)"), dep("ping", "db-backup")}), nil},
		{"empty", with(basePing(), "depends_on", []any{}), nil},
		{"on a check", with(baseSSL(), "depends_on", []any{dep("ping", "renew")}), nil},
		{"not an array", with(basePing(), "depends_on", "db"), []string{CodeDependencyInvalid}},
		{"a string item", with(basePing(), "depends_on", []any{"db"}), []string{CodeDependencyInvalid}},
		{"unknown kind", with(basePing(), "depends_on", []any{dep("tcp_check", "db")}), []string{CodeDependencyInvalid}},
		{"bad ping name", with(basePing(), "depends_on", []any{dep("ping", "a b")}), []string{CodeDependencyInvalid}},
		{"extra key", with(basePing(), "depends_on", []any{map[string]any{"kind": "ping", "name": "a", "uuid": "x"}}), []string{CodeDependencyInvalid}},
		{"repeat", with(basePing(), "depends_on", []any{dep("ping", "a"), dep("ping", "a")}), []string{CodeDependencyInvalid}},
		{"too many", with(basePing(), "depends_on", many), []string{CodeDependencyInvalid}},
		{"itself", with(basePing(), "depends_on", []any{dep("ping", basePing()["name"].(string))}), []string{CodeDependencyCycle}},
	} {
		if _, got := parse(t, tc.in, Options{}); !sameCodes(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCheckDependencies: unknown names and cycles across the account, and
// only the entries asked about are reported.
func TestCheckDependencies(t *testing.T) {
	m := func(kind, name string, deps ...Dependency) Manifest {
		return Manifest{Kind: kind, Name: name, DependsOn: deps}
	}
	db, app, web := Dependency{KindHTTP, "db"}, Dependency{KindPing, "app"}, Dependency{KindPing, "web"}
	all := []Manifest{m(KindHTTP, "db"), m(KindPing, "app", db), m(KindPing, "web", app), m(KindPing, "orphan", Dependency{KindPing, "gone"})}
	got := CheckDependencies(all, []int{0, 1, 2, 3})
	if len(got) != 1 || got[3].Codes()[0] != CodeDependencyInvalid {
		t.Fatalf("got %v", got)
	}
	// db -> web -> app -> db: every one of them is in the cycle.
	all[0].DependsOn = []Dependency{web}
	got = CheckDependencies(all, []int{0, 2})
	if len(got) != 2 || !sameCodes(got[0].Codes(), []string{CodeDependencyCycle}) || !sameCodes(got[2].Codes(), []string{CodeDependencyCycle}) {
		t.Fatalf("got %v", got)
	}
	if !strings.Contains(got[0][0].Message, "http_check db -> ping web -> ping app -> http_check db") {
		t.Fatalf("message %q", got[0][0].Message)
	}
	// A check depending on the ping of the same name is no cycle.
	got = CheckDependencies([]Manifest{m(KindHTTP, "x", Dependency{KindPing, "x"}), m(KindPing, "x")}, []int{0})
	if len(got) != 0 {
		t.Fatalf("got %v", got)
	}
}

// TestDependsOnDiff: apply's diff shows depends_on.
func TestDependsOnDiff(t *testing.T) {
	a, _ := parse(t, basePing(), Options{})
	b, _ := parse(t, with(basePing(), "depends_on", []any{map[string]any{"kind": "ping", "name": "db"}}), Options{})
	d := Diff(a, b)
	if len(d) != 1 || d["depends_on"][0] != nil || len(d["depends_on"][1].([]Dependency)) != 1 {
		t.Fatalf("diff %v", d)
	}
}
