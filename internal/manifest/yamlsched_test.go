package manifest

import (
	"strings"
	"testing"
)

// TestYAMLRoundTripOfSchedules: cron expressions start with YAML's alias
// (*) and reserved (@) indicators; export's YAML must quote them so that
// apply reads the same schedule back.
func TestYAMLRoundTripOfSchedules(t *testing.T) {
	var b Bundle
	for _, s := range []string{"* * * * *", "*/5 2 * * *", "@daily", "0 9 * * MON-FRI", "15m"} {
		m, errs := Parse(mustJSON(t, with(with(basePing(), "schedule", s), "timezone", "Europe/Berlin")), Options{})
		if len(errs) != 0 {
			t.Fatal(errs)
		}
		m.Name = strings.NewReplacer(" ", "", "*", "x", "/", "-", "@", "").Replace("s" + s)
		b.Monitors = append(b.Monitors, m)
	}
	b.ManifestVersion = 1
	y, err := BundleToYAML(b)
	if err != nil {
		t.Fatal(err)
	}
	js, err := BundleFromYAML(y)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	back, errs := ParseBundle(js, Options{})
	if len(errs) != 0 {
		t.Fatalf("%v\n%s", errs, y)
	}
	for i, m := range back.Monitors {
		if !Equal(m, b.Monitors[i]) {
			t.Fatalf("%s: %v\n%s", m.Name, Diff(b.Monitors[i], m), y)
		}
	}
}
