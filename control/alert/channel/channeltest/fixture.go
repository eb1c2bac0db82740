package channeltest

import (
	"time"

	"lookout/control/alert/channel"
)

// Now is the fixed instant of channel tests.
var Now = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// Clock is a channel.Deps.Now that always returns Now.
func Clock() time.Time { return Now }

// Alert returns a fixed alert of type typ (channel.MonitorFailed,
// channel.MonitorRecovered, ...). Its names, message and link hold
// characters that every format must escape: < > & " '.
func Alert(typ string) channel.Alert {
	duration := 12.5
	exit := int64(2)
	a := channel.Alert{
		ID:         "a1f3c9e2-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
		Type:       typ,
		OccurredAt: Now.Add(-time.Minute),
		AccountID:  "acc-42",
		Monitor: channel.Monitor{
			UUID:        "7c9e6679-7425-40de-944b-e07fc1f90ae7",
			Kind:        "ping",
			Name:        "nightly-backup",
			DisplayName: `Nightly <backup> & "restore"`,
			Project:     "infra's db",
			Tags:        []string{"prod", "db"},
			// Every night; a run may take an hour.
			ExpectedIntervalSeconds: 86400,
			TimeoutSeconds:          3600,
		},
		ExpectedAt: Now.Add(-2*time.Minute + 24*time.Hour),
		LastPingAt: Now.Add(-2 * time.Minute),
		Event: &channel.Event{
			EventType:  "fail",
			Status:     "fail",
			Duration:   &duration,
			ExitCode:   &exit,
			Host:       "db-1",
			Message:    "pg_dump: error: <FATAL> password authentication failed for user \"backup\" & gave up",
			Timestamp:  Now.Add(-2 * time.Minute),
			ReceivedAt: Now.Add(-2 * time.Minute),
		},
		PanelURL: "https://lookout.example.com/monitors/7c9e6679-7425-40de-944b-e07fc1f90ae7?tab=events&page=1",
	}
	if a.Resolved() {
		// The failure it ends began 14 minutes earlier.
		a.ProblemSince, a.ProblemType = a.OccurredAt.Add(-14*time.Minute), channel.MonitorFailed
	}
	return a
}
