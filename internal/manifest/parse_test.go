package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCodes(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	groups := Options{GroupExists: func(n string) bool { return n == "ops" }}
	tests := []struct {
		name string
		in   map[string]any
		want []string
	}{
		{"ping ok", basePing(), nil},
		{"http ok", baseHTTP(), nil},
		{"ssl ok", baseSSL(), nil},
		// manifest_version
		{"version 2", with(basePing(), "manifest_version", 2), []string{CodeManifestVersionUnsupported}},
		{"version string", with(basePing(), "manifest_version", "1"), []string{CodeManifestVersionUnsupported}},
		{"version missing", with(basePing(), "manifest_version", absent), []string{CodeManifestVersionUnsupported}},
		{"version 1.0", with(basePing(), "manifest_version", 1.0), nil},
		// kind
		{"kind unknown", with(basePing(), "kind", "icmp_check"), []string{CodeKindInvalid}},
		{"kind number", with(basePing(), "kind", 1), []string{CodeKindInvalid}},
		{"kind missing", with(basePing(), "kind", absent), []string{CodeKindInvalid}},
		{"kind null", with(basePing(), "kind", nil), []string{CodeKindInvalid}},
		// name
		{"ping name 64", with(basePing(), "name", long(64)), nil},
		{"ping name 65", with(basePing(), "name", long(65)), []string{CodeNameInvalid}},
		{"ping name empty", with(basePing(), "name", ""), []string{CodeNameInvalid}},
		{"ping name missing", with(basePing(), "name", absent), []string{CodeNameInvalid}},
		{"ping name number", with(basePing(), "name", 5), []string{CodeNameInvalid}},
		{"ping name charset", with(basePing(), "name", "a b"), []string{CodeNameCharsetInvalid}},
		{"ping name charset and long", with(basePing(), "name", long(64)+"é"), []string{CodeNameInvalid, CodeNameCharsetInvalid}},
		{"ping name all chars", with(basePing(), "name", "aZ09_-"), nil},
		{"check name 255", with(baseHTTP(), "name", long(255)), nil},
		{"check name 256", with(baseHTTP(), "name", long(256)), []string{CodeNameInvalid}},
		{"check name free", with(baseHTTP(), "name", "Home page (EU) — é"), nil},
		{"check name empty", with(baseSSL(), "name", ""), []string{CodeNameInvalid}},
		{"check name control", with(baseSSL(), "name", "a\nb"), []string{CodeNameInvalid}},
		{"check name NUL", with(baseSSL(), "name", "a\x00b"), []string{CodeNameInvalid}},
		{"check name zero-width only", with(baseHTTP(), "name", "\u200b\u200c\u200d\u2060\ufeff"), []string{CodeNameInvalid}},
		{"check name spaces only", with(baseHTTP(), "name", "   "), []string{CodeNameInvalid}},
		{"check name RTL override", with(baseHTTP(), "name", "home\u202epage"), []string{CodeNameInvalid}},
		{"check name isolate", with(baseHTTP(), "name", "\u2066home\u2069"), []string{CodeNameInvalid}},
		{"check name RTL mark", with(baseHTTP(), "name", "home\u200f"), []string{CodeNameInvalid}},
		{"check name emoji sequence", with(baseHTTP(), "name", "team 👨\u200d👩\u200d👧"), nil},
		{"check name Arabic", with(baseHTTP(), "name", "الصفحة الرئيسية"), nil},
		// enabled, tags, notification_group
		{"enabled false", with(basePing(), "enabled", false), nil},
		{"enabled string", with(basePing(), "enabled", "true"), []string{CodeEnabledInvalid}},
		{"tags ok", with(basePing(), "tags", []string{"b", "a"}), nil},
		{"tags string", with(basePing(), "tags", "a"), []string{CodeTagsInvalid}},
		{"tags number item", with(basePing(), "tags", []any{"a", 1}), []string{CodeTagsInvalid}},
		{"tags 50", with(basePing(), "tags", manyTags(50)), nil},
		{"tags 51", with(basePing(), "tags", manyTags(51)), []string{CodeTagsInvalid}},
		{"tag 64", with(basePing(), "tags", []string{long(64)}), nil},
		{"tag 65 and empty", with(basePing(), "tags", []string{long(65), ""}), []string{CodeTagsInvalid, CodeTagsInvalid}},
		{"tag repeated", with(basePing(), "tags", []string{"a", "a"}), []string{CodeTagsInvalid}},
		{"tag ESC", with(basePing(), "tags", []string{"ok", "a\x1b"}), []string{CodeTagsInvalid}},
		{"tag RTL override", with(basePing(), "tags", []string{"\u202eab"}), []string{CodeTagsInvalid}},
		{"tag zero-width only", with(basePing(), "tags", []string{"\ufeff"}), []string{CodeTagsInvalid}},
		{"tag free", with(basePing(), "tags", []string{"équipe nuit", "チーム"}), nil},
		{"group known", with(basePing(), "notification_group", "ops"), nil},
		{"group unknown", with(basePing(), "notification_group", "dev"), []string{CodeNotificationGroupInvalid}},
		{"group empty", with(basePing(), "notification_group", ""), nil},
		{"group number", with(basePing(), "notification_group", 3), []string{CodeNotificationGroupInvalid}},
		// ping numbers
		{"timeout 1", with(basePing(), "timeout_seconds", 1), nil},
		{"timeout 604800", with(basePing(), "timeout_seconds", 604800), nil},
		{"timeout 0", with(basePing(), "timeout_seconds", 0), []string{CodeTimeoutOutOfRange}},
		{"timeout 604801", with(basePing(), "timeout_seconds", 604801), []string{CodeTimeoutOutOfRange}},
		{"timeout string", with(basePing(), "timeout_seconds", "10"), []string{CodeTimeoutOutOfRange}},
		{"timeout fraction", with(basePing(), "timeout_seconds", 10.5), []string{CodeTimeoutOutOfRange}},
		{"timeout missing", with(basePing(), "timeout_seconds", absent), []string{CodeTimeoutOutOfRange}},
		{"timeout huge", with(basePing(), "timeout_seconds", 1e300), []string{CodeTimeoutOutOfRange}},
		{"interval 60", with(basePing(), "expected_interval_seconds", 60), nil},
		{"interval 31536000", with(basePing(), "expected_interval_seconds", 31536000), nil},
		{"interval 59", with(basePing(), "expected_interval_seconds", 59), []string{CodeIntervalOutOfRange}},
		{"interval 31536001", with(basePing(), "expected_interval_seconds", 31536001), []string{CodeIntervalOutOfRange}},
		{"interval bool", with(basePing(), "expected_interval_seconds", true), []string{CodeIntervalOutOfRange}},
		{"interval null", with(basePing(), "expected_interval_seconds", nil), nil},
		{"grace 0", with(basePing(), "grace_seconds", 0), nil},
		{"grace 604800", with(basePing(), "grace_seconds", 604800), nil},
		{"grace -1", with(basePing(), "grace_seconds", -1), []string{CodeGraceOutOfRange}},
		{"grace 604801", with(basePing(), "grace_seconds", 604801), []string{CodeGraceOutOfRange}},
		{"grace array", with(basePing(), "grace_seconds", []int{1}), []string{CodeGraceOutOfRange}},
		{"display 255", with(basePing(), "display_name", long(255)), nil},
		{"display 256", with(basePing(), "display_name", long(256)), []string{CodeDisplayNameInvalid}},
		{"display number", with(basePing(), "display_name", 1), []string{CodeDisplayNameInvalid}},
		{"display empty", with(basePing(), "display_name", ""), nil},
		{"display free", with(basePing(), "display_name", "Sauvegarde — nuit ✓"), nil},
		{"display NUL", with(basePing(), "display_name", "a\x00b"), []string{CodeDisplayNameInvalid}},
		{"display ESC", with(basePing(), "display_name", "\x1b[31mred"), []string{CodeDisplayNameInvalid}},
		{"display C1", with(basePing(), "display_name", "a\u009bb"), []string{CodeDisplayNameInvalid}},
		{"display RTL override", with(basePing(), "display_name", "a\u202eb"), []string{CodeDisplayNameInvalid}},
		{"display zero-width only", with(basePing(), "display_name", "\u200b"), []string{CodeDisplayNameInvalid}},
		{"display blank", with(basePing(), "display_name", " \u3000"), []string{CodeDisplayNameInvalid}},
		{"project 100", with(basePing(), "project", long(100)), nil},
		{"project 101", with(basePing(), "project", long(101)), []string{CodeProjectInvalid}},
		{"project empty", with(basePing(), "project", ""), nil},
		{"project ESC", with(basePing(), "project", "a\x1b"), []string{CodeProjectInvalid}},
		{"project RTL isolate", with(basePing(), "project", "a\u2067"), []string{CodeProjectInvalid}},
		{"project blank", with(basePing(), "project", "\u200d "), []string{CodeProjectInvalid}},
		{"project object", with(basePing(), "project", map[string]any{}), []string{CodeProjectInvalid}},
		// unknown and foreign fields
		{"uuid ignored", with(basePing(), "uuid", 12), nil},
		{"status ignored", with(basePing(), "status", map[string]any{"state": "up"}), nil},
		{"unknown field", with(basePing(), "timeout", 5), []string{CodeFieldUnknown}},
		{"check field on ping", with(basePing(), "regions", []string{"eu"}), []string{CodeFieldUnknown}},
		{"ping field on check", with(baseHTTP(), "grace_seconds", 5), []string{CodeFieldUnknown}},
		{"ssl config on http", with(baseHTTP(), "config.domain", "a.com"), []string{CodeFieldUnknown}},
		{"unknown config", with(baseSSL(), "config.verify", true), []string{CodeFieldUnknown}},
		{"config of another kind", with(baseSSL(), "config.host", "a"), []string{CodeFieldUnknown}},
		{"bad kind keeps known keys", with(baseHTTP(), "kind", "x"), []string{CodeKindInvalid}},
	}
	for _, tt := range tests {
		if _, got := parse(t, tt.in, groups); !sameCodes(got, tt.want) {
			t.Errorf("%s: codes %v, want %v", tt.name, got, tt.want)
		}
	}
}

func manyTags(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "t" + strings.Repeat("x", i)
	}
	return out
}

func TestParseNotJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `[1]`, `"x"`, `null`, `5`} {
		if _, errs := Parse([]byte(in), Options{}); !sameCodes(errs.Codes(), []string{CodeInvalidJSON}) {
			t.Errorf("Parse(%q) codes %v", in, errs.Codes())
		}
	}
}

func TestParseEveryProblemAtOnce(t *testing.T) {
	in := map[string]any{"manifest_version": "1", "kind": "ping", "name": "bad name", "enabled": 1,
		"tags": []any{"a", "a"}, "timeout_seconds": "10", "expected_interval_seconds": 5,
		"grace_seconds": -5, "display_name": 2, "project": false, "schedule": "5m", "regions": []string{"eu"}, "zzz": 1}
	_, errs := Parse(mustJSON(t, in), Options{})
	want := []string{CodeManifestVersionUnsupported, CodeNameCharsetInvalid, CodeEnabledInvalid, CodeTagsInvalid,
		CodeTimeoutOutOfRange, CodeIntervalOutOfRange, CodeScheduleConflict, CodeGraceOutOfRange, CodeDisplayNameInvalid,
		CodeProjectInvalid, CodeFieldUnknown, CodeFieldUnknown}
	if !sameCodes(errs.Codes(), want) {
		t.Fatalf("codes %v\nwant  %v", errs.Codes(), want)
	}
	if errs[0].Field != "manifest_version" || !strings.HasPrefix(errs[0].Message, "manifest_version ") {
		t.Errorf("first error %+v", errs[0])
	}
	if errs[10].Field != "regions" || errs[11].Field != "zzz" {
		t.Errorf("unknown fields %+v %+v", errs[10], errs[11])
	}
}

func TestParseDefaults(t *testing.T) {
	m, errs := Parse(mustJSON(t, basePing()), Options{})
	if len(errs) != 0 || !m.Enabled || m.ManifestVersion != 1 || m.Tags == nil || m.Project != nil {
		t.Errorf("ping defaults: %+v %v", m, errs)
	}
	m, _ = Parse(mustJSON(t, with(basePing(), "project", "")), Options{})
	if m.Project == nil || *m.Project != "" {
		t.Errorf("empty project not kept as a present empty value: %v", m.Project)
	}
	m, _ = Parse(mustJSON(t, with(with(baseHTTP(), "config.method", "post"), "schedule", " */5  * * * * ")), Options{})
	if m.Config.Method != "POST" || m.Config.Timeout != 10 || m.Schedule != "*/5 * * * *" {
		t.Errorf("http defaults: %+v", m)
	}
	m, _ = Parse(mustJSON(t, with(baseSSL(), "config.domain", "Example.COM:8443")), Options{})
	if !reflect.DeepEqual(m.Config, Config{Domain: "example.com:8443", WarningDays: 30, AlertDays: 7}) {
		t.Errorf("ssl defaults: %+v", m.Config)
	}
	m, _ = Parse(mustJSON(t, with(baseSSL(), "config.warning_days", 3)), Options{})
	if m.Config.AlertDays != 3 {
		t.Errorf("alert_days default with warning_days 3: %d", m.Config.AlertDays)
	}
}
