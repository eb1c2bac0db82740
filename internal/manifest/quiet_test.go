package manifest

import "testing"

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
