package schedule

import (
	"testing"
	"time"
)

// TestNextInZone walks schedules across the 2026 and 2027 daylight-saving
// switches of three zones (both hemispheres), month ends, Feb 29, @weekly
// and crontab's day-of-month OR day-of-week rule. Times are written with
// their local offset so each row reads as the wall clock shows it.
func TestNextInZone(t *testing.T) {
	tests := []struct {
		name, zone, spec, after string
		want                    []string
	}{
		// Europe/Berlin: 2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST -> 02:00 CET.
		{"berlin skipped 02:30 runs at the jump", "Europe/Berlin", "30 2 * * *", "2026-03-28T12:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"berlin skipped hour: every minute", "Europe/Berlin", "* * * * *", "2026-03-29T01:58:00+01:00",
			[]string{"2026-03-29T01:59:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T03:01:00+02:00"}},
		{"berlin skipped and real 03:00 are one run", "Europe/Berlin", "0 2,3 * * *", "2026-03-29T00:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:00:00+02:00"}},
		{"berlin repeated 02:30 runs once", "Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"berlin repeated hour: first pass only", "Europe/Berlin", "*/20 * * * *", "2026-10-25T01:50:00+02:00",
			[]string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:20:00+02:00", "2026-10-25T02:40:00+02:00", "2026-10-25T03:00:00+01:00"}},
		{"berlin from inside the second pass", "Europe/Berlin", "*/20 * * * *", "2026-10-25T02:10:00+01:00",
			[]string{"2026-10-25T03:00:00+01:00", "2026-10-25T03:20:00+01:00"}},
		{"berlin 2027 spring", "Europe/Berlin", "0 2 * * *", "2027-03-27T12:00:00+01:00",
			[]string{"2027-03-28T03:00:00+02:00", "2027-03-29T02:00:00+02:00"}},
		{"berlin 2027 autumn", "Europe/Berlin", "15 2 * * *", "2027-10-30T12:00:00+02:00",
			[]string{"2027-10-31T02:15:00+02:00", "2027-11-01T02:15:00+01:00"}},

		// America/New_York: 2026-03-08 02:00 EST -> 03:00 EDT; 2026-11-01 02:00 EDT -> 01:00 EST.
		{"new york skipped 02:30", "America/New_York", "30 2 * * *", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"new york repeated 01:30", "America/New_York", "30 1 * * *", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"new york repeated hour, every 30 minutes", "America/New_York", "*/30 * * * *", "2026-11-01T00:45:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00"}},
		{"new york 2027 spring", "America/New_York", "0 2 * * *", "2027-03-13T12:00:00-05:00",
			[]string{"2027-03-14T03:00:00-04:00", "2027-03-15T02:00:00-04:00"}},
		{"new york 2027 autumn, Sundays", "America/New_York", "0 1 * * SUN", "2027-11-06T00:00:00-04:00",
			[]string{"2027-11-07T01:00:00-04:00", "2027-11-14T01:00:00-05:00"}},
		{"new york @weekly across the switch", "America/New_York", "@weekly", "2026-03-01T12:00:00-05:00",
			[]string{"2026-03-08T00:00:00-05:00", "2026-03-15T00:00:00-04:00"}},

		// Australia/Sydney: 2026-04-05 03:00 AEDT -> 02:00 AEST; 2026-10-04 02:00 AEST -> 03:00 AEDT.
		{"sydney repeated 02:30", "Australia/Sydney", "30 2 * * *", "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T02:30:00+11:00", "2026-04-06T02:30:00+10:00"}},
		{"sydney skipped 02:30", "Australia/Sydney", "30 2 * * *", "2026-10-03T12:00:00+10:00",
			[]string{"2026-10-04T03:00:00+11:00", "2026-10-05T02:30:00+11:00"}},
		{"sydney 2027 autumn", "Australia/Sydney", "0 2 * * *", "2027-04-03T12:00:00+11:00",
			[]string{"2027-04-04T02:00:00+11:00", "2027-04-05T02:00:00+10:00"}},
		{"sydney 2027 spring", "Australia/Sydney", "45 2 * * *", "2027-10-02T12:00:00+10:00",
			[]string{"2027-10-03T03:00:00+11:00", "2027-10-04T02:45:00+11:00"}},

		// Month ends, Feb 29, descriptors.
		{"31st skips short months", "UTC", "0 0 31 * *", "2026-01-31T00:00:00Z",
			[]string{"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
		{"@monthly across a switch", "America/New_York", "@monthly", "2026-02-15T00:00:00-05:00",
			[]string{"2026-03-01T00:00:00-05:00", "2026-04-01T00:00:00-04:00"}},
		{"feb 29 waits for a leap year", "UTC", "0 0 29 2 *", "2026-01-01T00:00:00Z",
			[]string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"feb 29 in sydney", "Australia/Sydney", "0 9 29 2 *", "2026-01-01T00:00:00+11:00",
			[]string{"2028-02-29T09:00:00+11:00"}},
		{"@weekly is Sunday midnight", "UTC", "@weekly", "2026-03-04T00:00:00Z",
			[]string{"2026-03-08T00:00:00Z", "2026-03-15T00:00:00Z"}},
		{"@yearly in berlin", "Europe/Berlin", "@yearly", "2026-06-01T00:00:00+02:00",
			[]string{"2027-01-01T00:00:00+01:00", "2028-01-01T00:00:00+01:00"}},

		// Day of month OR day of week when both are restricted, AND when either starts with "*".
		{"13th or Friday", "UTC", "0 0 13 * FRI", "2026-02-01T00:00:00Z",
			[]string{"2026-02-06T00:00:00Z", "2026-02-13T00:00:00Z", "2026-02-20T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z"}},
		{"1st, 15th or Monday", "UTC", "0 0 1,15 * MON", "2026-02-28T00:00:00Z",
			[]string{"2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z", "2026-03-09T00:00:00Z", "2026-03-15T00:00:00Z", "2026-03-16T00:00:00Z"}},
		{"a stepped wildcard day is unrestricted: AND", "UTC", "0 0 */10 * MON", "2026-02-01T00:00:00Z",
			[]string{"2026-05-11T00:00:00Z"}},
		{"weekday with every day: only the weekday", "UTC", "0 0 * * MON", "2026-03-01T00:00:00Z",
			[]string{"2026-03-02T00:00:00Z", "2026-03-09T00:00:00Z"}},
		{"sunday as 7", "UTC", "0 0 * * 7", "2026-03-01T00:00:00Z",
			[]string{"2026-03-08T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseIn(tt.spec, tt.zone)
			if err != nil {
				t.Fatalf("ParseIn(%q, %q): %v", tt.spec, tt.zone, err)
			}
			cur := at(tt.after)
			for i, w := range tt.want {
				cur = s.Next(cur)
				if !cur.Equal(at(w)) || cur.Location() != time.UTC {
					t.Fatalf("Next #%d = %v (%v), want %s", i+1, cur, cur.In(s.Zone()), w)
				}
			}
		})
	}
}

// TestPrevMirrorsNext checks that Prev gives the same times backwards, with
// the same rules: the skipped time at the jump, a repeated one once.
func TestPrevMirrorsNext(t *testing.T) {
	for _, c := range []struct{ zone, spec, from, to string }{
		{"Europe/Berlin", "30 2 * * *", "2026-03-25T00:00:00Z", "2026-04-02T00:00:00Z"},
		{"Europe/Berlin", "*/20 * * * *", "2026-10-24T22:00:00Z", "2026-10-25T04:00:00Z"},
		{"Europe/Berlin", "* * * * *", "2026-03-28T23:30:00Z", "2026-03-29T01:30:00Z"},
		{"America/New_York", "*/30 * * * *", "2026-11-01T03:00:00Z", "2026-11-01T09:00:00Z"},
		{"Australia/Sydney", "30 2 * * *", "2026-09-30T00:00:00Z", "2026-10-08T00:00:00Z"},
		{"Australia/Sydney", "*/15 2 * * *", "2026-04-03T00:00:00Z", "2026-04-07T00:00:00Z"},
		{"UTC", "0 0 29 2 *", "2027-01-01T00:00:00Z", "2033-01-01T00:00:00Z"},
		{"UTC", "7m", "2026-01-01T00:00:00Z", "2026-01-01T02:00:00Z"},
	} {
		s, err := ParseIn(c.spec, c.zone)
		if err != nil {
			t.Fatal(err)
		}
		from, to := at(c.from), at(c.to)
		var forward []time.Time
		for x := s.Next(from); x.Before(to); x = s.Next(x) {
			forward = append(forward, x)
		}
		if len(forward) == 0 {
			t.Fatalf("%s %q: no times", c.zone, c.spec)
		}
		var backward []time.Time
		for x := s.Prev(to); x.After(from); x = s.Prev(x) {
			backward = append([]time.Time{x}, backward...)
		}
		if len(forward) != len(backward) {
			t.Fatalf("%s %q: %d times forwards, %d backwards", c.zone, c.spec, len(forward), len(backward))
		}
		for i := range forward {
			if !forward[i].Equal(backward[i]) {
				t.Fatalf("%s %q: #%d forwards %v, backwards %v", c.zone, c.spec, i, forward[i], backward[i])
			}
			if i > 0 && !forward[i].After(forward[i-1]) {
				t.Fatalf("%s %q: times not increasing at #%d", c.zone, c.spec, i)
			}
		}
		// A time that is a run is not its own Prev or Next.
		if p := s.Prev(forward[0].Add(time.Nanosecond)); !p.Equal(forward[0]) {
			t.Fatalf("%s %q: Prev just after a run = %v, want %v", c.zone, c.spec, p, forward[0])
		}
	}
}

func TestNextN(t *testing.T) {
	s, err := ParseIn("0 9 * * MON-FRI", "Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	got := s.NextN(at("2026-03-27T10:00:00+01:00"), 3) // a Friday
	want := []string{"2026-03-30T09:00:00+02:00", "2026-03-31T09:00:00+02:00", "2026-04-01T09:00:00+02:00"}
	if len(got) != len(want) {
		t.Fatalf("NextN = %v", got)
	}
	for i := range want {
		if !got[i].Equal(at(want[i])) {
			t.Fatalf("NextN[%d] = %v, want %s", i, got[i], want[i])
		}
	}
	if n := (Schedule{}).NextN(time.Now(), 3); len(n) != 0 {
		t.Fatalf("the zero schedule previews %v", n)
	}
}

func TestExpectedAfter(t *testing.T) {
	iv, _ := Parse("5m")
	last := at("2026-03-10T10:03:17Z")
	if got := iv.ExpectedAfter(last); !got.Equal(at("2026-03-10T10:08:17Z")) {
		t.Errorf("interval: ExpectedAfter = %v, want last + 5m", got)
	}
	c, _ := ParseIn("*/5 * * * *", "Asia/Kolkata") // +05:30: minutes still line up
	if got := c.ExpectedAfter(last); !got.Equal(at("2026-03-10T10:05:00Z")) {
		t.Errorf("cron: ExpectedAfter = %v", got)
	}
}

func TestZones(t *testing.T) {
	for _, name := range []string{"", "UTC", "Etc/UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Asia/Kathmandu"} {
		if _, err := LoadZone(name); err != nil {
			t.Errorf("LoadZone(%q): %v", name, err)
		}
	}
	for _, name := range []string{"Local", "europe/berlin", "Europe/Berlinn", "../etc/passwd", "/usr/share/zoneinfo/UTC", "Europe/../UTC", " UTC", "Mars/Olympus", string(make([]byte, 100))} {
		if _, err := LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) accepted", name)
		}
		if _, err := ParseIn("5m", name); err == nil {
			t.Errorf("ParseIn(5m, %q) accepted", name)
		}
	}
	a, _ := LoadZone("Europe/Berlin")
	b, _ := LoadZone("Europe/Berlin")
	if a != b {
		t.Error("a zone is loaded twice")
	}
}
