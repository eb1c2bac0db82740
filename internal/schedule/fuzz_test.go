package schedule

import (
	"errors"
	"testing"
	"time"
)

// FuzzParseIn: no string, as schedule or zone, panics; every error wraps
// ErrInvalid or ErrZoneInvalid; every schedule that parses fires, later
// than asked, and Prev of that time is earlier.
func FuzzParseIn(f *testing.F) {
	for _, s := range []string{
		"* * * * *", "30 2 * * *", "0 0 29 2 *", "0 0 30 2 *", "@weekly", "@every 1s", "5m", "365d",
		"TZ=Europe/Berlin 0 0 * * *", "CRON_TZ=", "0 0 ? * *", "*/0 * * * *", "1-2-3 * * * *",
		"0 0 L * *", "0 0 * * 5#3", "H * * * *", "59-0/7 23-1 31-2 12-1 6-0", "0 0 13 * FRI",
	} {
		f.Add(s, "Europe/Berlin")
		f.Add(s, "")
	}
	f.Add("0 2 * * *", "America/New_York")
	f.Add("0 2 * * *", "Local")
	f.Add("0 2 * * *", "../../../../etc/passwd")
	base := time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, spec, zone string) {
		s, err := ParseIn(spec, zone)
		if err != nil {
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrZoneInvalid) {
				t.Fatalf("ParseIn(%q, %q): %v wraps neither error", spec, zone, err)
			}
			return
		}
		next := s.Next(base)
		if !next.After(base) {
			t.Fatalf("ParseIn(%q, %q): Next(%v) = %v", spec, zone, base, next)
		}
		if p := s.Prev(next); !p.Before(next) {
			t.Fatalf("ParseIn(%q, %q): Prev(%v) = %v", spec, zone, next, p)
		}
	})
}
