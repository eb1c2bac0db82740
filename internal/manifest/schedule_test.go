package manifest

import (
	"strings"
	"testing"
)

func TestParseScheduleCodes(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want []string
	}{
		{"ping cron", with(basePing(), "schedule", "30 2 * * *"), nil},
		{"ping cron in a zone", with(with(basePing(), "schedule", "30 2 * * *"), "timezone", "Europe/Berlin"), nil},
		{"ping descriptor", with(basePing(), "schedule", "@weekly"), nil},
		{"ping interval shorthand", with(basePing(), "schedule", "15m"), nil},
		{"ping schedule and interval", with(with(basePing(), "schedule", "@daily"), "expected_interval_seconds", 3600), []string{CodeScheduleConflict}},
		{"ping bad schedule and interval", with(with(basePing(), "schedule", "daily"), "expected_interval_seconds", 3600), []string{CodeScheduleInvalid, CodeScheduleConflict}},
		{"ping never fires", with(basePing(), "schedule", "0 0 30 2 *"), []string{CodeScheduleInvalid}},
		{"ping @reboot", with(basePing(), "schedule", "@reboot"), []string{CodeScheduleInvalid}},
		{"ping TZ prefix", with(basePing(), "schedule", "TZ=Europe/Berlin 0 0 * * *"), []string{CodeScheduleInvalid}},
		{"ping schedule number", with(basePing(), "schedule", 5), []string{CodeScheduleInvalid}},
		{"ping schedule empty", with(basePing(), "schedule", ""), []string{CodeScheduleInvalid}},
		{"ping unknown zone", with(with(basePing(), "schedule", "@daily"), "timezone", "Mars/Olympus"), []string{CodeTimezoneInvalid}},
		{"ping Local zone", with(with(basePing(), "schedule", "@daily"), "timezone", "Local"), []string{CodeTimezoneInvalid}},
		{"ping empty zone", with(with(basePing(), "schedule", "@daily"), "timezone", ""), []string{CodeTimezoneInvalid}},
		{"ping zone path", with(with(basePing(), "schedule", "@daily"), "timezone", "../../etc/passwd"), []string{CodeTimezoneInvalid}},
		{"ping zone number", with(with(basePing(), "schedule", "@daily"), "timezone", 1), []string{CodeTimezoneInvalid}},
		{"ping long zone", with(with(basePing(), "schedule", "@daily"), "timezone", strings.Repeat("A/", 400)), []string{CodeTimezoneInvalid}},
		{"ping bad zone and schedule", with(with(basePing(), "schedule", "61 * * * *"), "timezone", "X"), []string{CodeTimezoneInvalid, CodeScheduleInvalid}},
		{"ping zone without schedule", with(basePing(), "timezone", "Europe/Berlin"), nil},
		{"check zone", with(with(baseHTTP(), "schedule", "0 9 * * MON-FRI"), "timezone", "America/New_York"), nil},
		{"check bad zone", with(baseSSL(), "timezone", "Berlin"), []string{CodeTimezoneInvalid}},
		{"check descriptor", with(baseSSL(), "schedule", "@daily"), nil},
	}
	for _, tt := range tests {
		if _, got := parse(t, tt.in, Options{}); !sameCodes(got, tt.want) {
			t.Errorf("%s: codes %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestScheduleCanonicalAndDiff(t *testing.T) {
	m, errs := Parse(mustJSON(t, with(basePing(), "schedule", "  30 2  * * * ")), Options{})
	if len(errs) != 0 || m.Schedule != "30 2 * * *" || m.Timezone != "UTC" {
		t.Fatalf("ping schedule canonical: %q %q %v", m.Schedule, m.Timezone, errs)
	}
	z, _ := Parse(mustJSON(t, with(with(basePing(), "schedule", "30 2 * * *"), "timezone", "UTC")), Options{})
	if !Equal(m, z) {
		t.Errorf("an absent timezone and UTC differ: %v", Diff(m, z))
	}
	b, _ := Parse(mustJSON(t, with(with(basePing(), "schedule", "30 2 * * *"), "timezone", "Europe/Berlin")), Options{})
	d := Diff(m, b)
	if len(d) != 1 || d["timezone"] != [2]any{"UTC", "Europe/Berlin"} {
		t.Errorf("Diff = %v", d)
	}
	iv, _ := Parse(mustJSON(t, with(basePing(), "expected_interval_seconds", 3600)), Options{})
	d = Diff(iv, m)
	if len(d) != 3 || d["schedule"] != [2]any{nil, "30 2 * * *"} || d["timezone"] != [2]any{nil, "UTC"} || d["expected_interval_seconds"] != [2]any{int64(3600), nil} {
		t.Errorf("interval to schedule: Diff = %v", d)
	}
	// A zone means nothing without a schedule: canonical form drops it.
	nz, _ := Parse(mustJSON(t, with(basePing(), "timezone", "Europe/Berlin")), Options{})
	if nz.Timezone != "" {
		t.Errorf("a ping without schedule keeps timezone %q", nz.Timezone)
	}
}
