package channel_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
)

// TestSummary: the one line of each alert type (testdata/summaries.txt;
// go test -update rewrites it).
func TestSummary(t *testing.T) {
	now := channeltest.Now
	ping := func(typ string, change func(*channel.Alert)) channel.Alert {
		a := channeltest.Alert(typ)
		a.Monitor.DisplayName = ""
		if change != nil {
			change(&a)
		}
		return a
	}
	check := func(typ, kind string, x *channel.Execution, change func(*channel.Alert)) channel.Alert {
		a := ping(typ, nil)
		a.Monitor = channel.Monitor{UUID: "c0ffee00-0000-4000-8000-000000000001", Kind: kind, Name: "home-page", DisplayName: "home page", ExpectedStatus: 200, Domain: "example.com"}
		a.ExpectedAt, a.LastPingAt = time.Time{}, time.Time{}
		a.Event = &channel.Event{EventType: "execution", Status: "failed", Execution: x}
		if change != nil {
			change(&a)
		}
		return a
	}
	status := func(code int64, err string) *channel.Execution {
		return &channel.Execution{Error: err, FinishedAt: now, HTTP: &channel.ExecutionHTTP{StatusCode: code}}
	}
	cert := func(days int64, valid bool, err string) *channel.Execution {
		return &channel.Execution{Error: err, FinishedAt: now, SSL: &channel.ExecutionSSL{ExpiresAt: now.Add(time.Duration(days)*24*time.Hour + time.Hour), DaysLeft: days, ChainValid: valid, HostnameValid: true}}
	}
	cases := []struct {
		name string
		a    channel.Alert
	}{
		{"monitor.missed", ping(channel.MonitorMissed, func(a *channel.Alert) {
			a.Event, a.ExpectedAt = nil, time.Date(2026, 3, 14, 2, 30, 0, 0, time.UTC)
		})},
		{"monitor.missed, schedule in a zone, the day before", ping(channel.MonitorMissed, func(a *channel.Alert) {
			a.Event, a.Monitor.Schedule, a.Monitor.Timezone = nil, "30 2 * * 1-5", "Europe/Berlin"
			a.ExpectedAt = time.Date(2026, 3, 13, 1, 30, 0, 0, time.UTC)
		})},
		{"monitor.missed, nothing expected", ping(channel.MonitorMissed, func(a *channel.Alert) { a.ExpectedAt = time.Time{} })},
		{"monitor.failed", ping(channel.MonitorFailed, nil)},
		{"monitor.failed, display name, multi-line message", ping(channel.MonitorFailed, func(a *channel.Alert) {
			a.Monitor.DisplayName = "Nightly backup"
			a.Event.ExitCode = nil
			a.Event.Message = "\n  tar: /srv: Cannot open: Permission denied  \ntar: Exiting with failure status"
		})},
		{"monitor.failed, no event", ping(channel.MonitorFailed, func(a *channel.Alert) { a.Event = nil })},
		{"monitor.failed, a long message", ping(channel.MonitorFailed, func(a *channel.Alert) { a.Event.Message = strings.Repeat("disk full ", 30) })},
		{"monitor.timeout", ping(channel.MonitorTimeout, func(a *channel.Alert) { a.Event = nil })},
		{"monitor.slow", ping(channel.MonitorSlow, func(a *channel.Alert) { d := 4500.0; a.Event.Duration = &d })},
		{"monitor.recovered", ping(channel.MonitorRecovered, nil)},
		{"monitor.recovered after a slow run", ping(channel.MonitorRecovered, func(a *channel.Alert) {
			a.ProblemType, a.ProblemSince = channel.MonitorSlow, a.OccurredAt.Add(-26*time.Hour-5*time.Minute)
		})},
		{"monitor.recovered, start unknown", ping(channel.MonitorRecovered, func(a *channel.Alert) { a.ProblemSince = time.Time{} })},
		{"check.failed, another status", check(channel.CheckFailed, "http_check", status(503, "the status is 503, expected 200"), nil)},
		{"check.failed, any 2xx or 3xx", check(channel.CheckFailed, "http_check", status(404, "the status is 404, expected 2xx or 3xx"), func(a *channel.Alert) { a.Monitor.ExpectedStatus = 0 })},
		{"check.failed, refused, two regions", check(channel.CheckFailed, "http_check", &channel.Execution{Error: "connect: connection refused"}, func(a *channel.Alert) { a.Regions = []string{"eu-1", "us-1"} })},
		{"check.failed, content missing", check(channel.CheckFailed, "http_check", status(200, "the answer does not contain \"ok\""), nil)},
		{"check.recovered", check(channel.CheckRecovered, "http_check", status(200, ""), func(a *channel.Alert) {
			a.ProblemSince, a.ProblemType = a.OccurredAt.Add(-3*24*time.Hour), channel.CheckFailed
		})},
		{"ssl.warning", check(channel.SSLWarning, "ssl_check", cert(12, true, ""), nil)},
		{"ssl.alert, expiring", check(channel.SSLAlert, "ssl_check", cert(1, true, "the certificate expires in 1 day"), nil)},
		{"ssl.alert, invalid", check(channel.SSLAlert, "ssl_check", cert(200, false, "x509: certificate signed by unknown authority"), nil)},
		{"ssl.alert, no execution", check(channel.SSLAlert, "ssl_check", nil, nil)},
		{"agent.offline", channel.Alert{Type: channel.AgentOffline, Region: &channel.Region{Name: "eu-1", Monitors: 3}}},
		{"agent.online", channel.Alert{Type: channel.AgentOnline, Region: &channel.Region{Name: "eu-1", Monitors: 3}}},
		{"test", ping(channel.Test, nil)},
	}
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "%s\n\t%s\n", c.name, c.a.Summary())
	}
	channeltest.Golden(t, "summaries.txt", []byte(b.String()))
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0 s", 44*time.Second + 600*time.Millisecond: "45 s", 12*time.Minute + 59*time.Second: "12 min", time.Hour: "1 h",
		2*time.Hour + 5*time.Minute: "2 h 5 min", 47 * time.Hour: "47 h", 50 * time.Hour: "2 days",
	} {
		if got := channel.Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
