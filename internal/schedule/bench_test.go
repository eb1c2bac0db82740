package schedule

import (
	"testing"
	"time"
)

// BenchmarkParseAndNext is what a ping monitor's deadline costs the engine:
// parse the stored schedule in its zone, then its next time.
func BenchmarkParseAndNext(b *testing.B) {
	at := time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)
	for _, c := range []struct{ name, spec, zone string }{
		{"interval", "1m", ""},
		{"cron-utc", "* * * * *", ""},
		{"cron-berlin", "* * * * *", "Europe/Berlin"},
		{"daily-sydney", "30 2 * * *", "Australia/Sydney"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				s, err := ParseIn(c.spec, c.zone)
				if err != nil {
					b.Fatal(err)
				}
				s.ExpectedAfter(at)
			}
		})
	}
}
