package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestNext(t *testing.T) {
	tests := []struct {
		spec, after string
		want        []string // successive run times
	}{
		{"*/15 * * * *", "2024-03-10T10:07:00Z", []string{"2024-03-10T10:15:00Z", "2024-03-10T10:30:00Z", "2024-03-10T10:45:00Z", "2024-03-10T11:00:00Z"}},
		{"*/15 * * * *", "2024-03-10T10:15:00Z", []string{"2024-03-10T10:30:00Z"}}, // strictly after
		{"0 3 * * MON-FRI", "2024-03-08T03:00:00Z", []string{"2024-03-11T03:00:00Z", "2024-03-12T03:00:00Z"}},
		{"0 0 1 JAN,JUL *", "2024-03-10T00:00:00Z", []string{"2024-07-01T00:00:00Z", "2025-01-01T00:00:00Z"}},
		{"5 4 * * sun", "2024-03-10T04:05:00Z", []string{"2024-03-17T04:05:00Z"}},
		{"  5   4 * * sun ", "2024-03-09T00:00:00Z", []string{"2024-03-10T04:05:00Z"}},
		{"0 12 * * 1,3,5", "2024-03-10T00:00:00Z", []string{"2024-03-11T12:00:00Z", "2024-03-13T12:00:00Z", "2024-03-15T12:00:00Z"}},
		{"0 0 29 2 *", "2024-03-01T00:00:00Z", []string{"2028-02-29T00:00:00Z"}},
		{"30s", "2024-03-10T10:00:00Z", []string{"2024-03-10T10:00:30Z", "2024-03-10T10:01:00Z"}},
		{"30s", "2024-03-10T10:00:29.999Z", []string{"2024-03-10T10:00:30Z"}},
		{"5m", "2024-03-10T10:07:13Z", []string{"2024-03-10T10:10:00Z", "2024-03-10T10:15:00Z"}},
		{"1h", "2024-03-10T10:00:00Z", []string{"2024-03-10T11:00:00Z"}},
		{"1d", "2024-03-10T10:00:00Z", []string{"2024-03-11T00:00:00Z"}},
		{"7d", "2024-03-10T10:00:00Z", []string{"2024-03-14T00:00:00Z", "2024-03-21T00:00:00Z"}}, // Thursdays
		{"365d", "2024-03-10T10:00:00Z", []string{"2024-12-18T00:00:00Z"}},
		{"1h", "1969-12-31T22:30:00Z", []string{"1969-12-31T23:00:00Z", "1970-01-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		s, err := Parse(tt.spec)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.spec, err)
		}
		cur := at(tt.after)
		for _, w := range tt.want {
			cur = s.Next(cur)
			if !cur.Equal(at(w)) || cur.Location() != time.UTC {
				t.Errorf("%q: Next = %v, want %s", tt.spec, cur, w)
				break
			}
		}
	}
}

func TestNextConvertsToUTC(t *testing.T) {
	s, _ := Parse("0 3 * * *")
	tz := time.FixedZone("X", 5*3600)
	got := s.Next(time.Date(2024, 3, 10, 7, 0, 0, 0, tz)) // 02:00 UTC
	if want := at("2024-03-10T03:00:00Z"); !got.Equal(want) {
		t.Errorf("Next = %v, want %v", got, want)
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		" 5m ":            "5m",
		"*/15  * * * *":   "*/15 * * * *",
		"0 3 * * MON-FRI": "0 3 * * MON-FRI",
	} {
		s, err := Parse(in)
		if err != nil || s.String() != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, s.String(), err, want)
		}
	}
}

func TestInterval(t *testing.T) {
	if d, ok := mustParse(t, "5m").Interval(); !ok || d != 5*time.Minute {
		t.Errorf("Interval(5m) = %v, %v", d, ok)
	}
	if _, ok := mustParse(t, "* * * * *").Interval(); ok {
		t.Error("cron expression reported as interval")
	}
	if !(Schedule{}).Next(time.Now()).IsZero() {
		t.Error("zero Schedule fired")
	}
}

func mustParse(t *testing.T, s string) Schedule {
	t.Helper()
	sc, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestParseInvalid(t *testing.T) {
	for _, spec := range []string{
		"", "   ", "29s", "366d", "8761h", "525601m", "0s", "0m", "5x", "5", "m", "-5m", "+5m",
		"05m", "5.5m", "5M", "99999999999999999999d",
		"* * * *", "* * * * * *", "0 * * * * *", "61 * * * *", "* 24 * * *", "* * 0 * *",
		"* * 32 * *", "* * * 13 *", "* * * * 8", "* * * * FOO", "*/0 * * * *", "1-2-3 * * * *",
		"@every 5m", "@reboot", "@HOURLY", "@daily 5", "@", strings.Repeat("1,", 200) + "1 * * * *", "CRON_TZ=UTC * * * * *", "TZ=UTC 0 0 * * *", "0 0 ? * *",
		"0 0 30 2 *", "L * * * *",
	} {
		if s, err := Parse(spec); err == nil {
			t.Errorf("Parse(%q) = %v, want error", spec, s)
		} else if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error %v does not wrap ErrInvalid", spec, err)
		}
	}
}

func TestParseBounds(t *testing.T) {
	for _, spec := range []string{"30s", "59s", "1m", "8760h", "525600m", "31536000s", "365d", "0 0 * * 0", "0 0 * * 7", "0-59/5 * * * *", "5/10 * * * *", "@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"} {
		if _, err := Parse(spec); err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
		}
	}
}

func TestNextForSpreadsIntervalChecksStably(t *testing.T) {
	s, err := Parse("5m")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	offsets := map[time.Duration]bool{}
	for i := range 50 {
		id := fmt.Sprintf("check-%d", i)
		off := s.Offset(id)
		if off < 0 || off >= 5*time.Minute || off%time.Second != 0 || s.Offset(id) != off {
			t.Fatalf("%s: offset %v", id, off)
		}
		offsets[off] = true
		next := s.NextFor(id, at)
		if !next.After(at) || next.Sub(at) > 5*time.Minute || (next.Unix()-int64(off/time.Second))%300 != 0 {
			t.Fatalf("%s: next %v after %v with offset %v", id, next, at, off)
		}
		if again := s.NextFor(id, next); again.Sub(next) != 5*time.Minute {
			t.Fatalf("%s: the slot after %v is %v", id, next, again)
		}
	}
	if len(offsets) < 25 {
		t.Fatalf("50 checks share %d offsets", len(offsets))
	}
	c, _ := Parse("*/15 * * * *")
	if c.Offset("x") != 0 || !c.NextFor("x", at).Equal(at.Add(15*time.Minute)) {
		t.Fatalf("cron: offset %v next %v", c.Offset("x"), c.NextFor("x", at))
	}
}
