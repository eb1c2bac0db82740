package admin

import (
	"testing"
	"time"
)

func TestNextMonthUTC(t *testing.T) {
	tests := []struct{ now, want string }{
		{"2026-03-15T12:30:00Z", "2026-04-01T00:00:00Z"},
		{"2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		{"2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"},
		// Another zone: the month is the UTC one.
		{"2026-04-01T01:00:00+02:00", "2026-04-01T00:00:00Z"},
	}
	for _, tt := range tests {
		now, err := time.Parse(time.RFC3339, tt.now)
		if err != nil {
			t.Fatal(err)
		}
		if got := nextMonthUTC(now).Format(time.RFC3339); got != tt.want {
			t.Errorf("nextMonthUTC(%s) = %s, want %s", tt.now, got, tt.want)
		}
	}
}
