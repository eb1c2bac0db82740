package main

import "fmt"

// The mix of the load's ping monitors: a third expect a ping every
// interval, half follow a cron schedule in a time zone, the rest an
// interval shorthand schedule; checks run every minute to every hour.
var (
	intervals = []int{60, 300, 900, 3600, 21600, 86400}
	crons     = []string{"*/5 * * * *", "0 * * * *", "30 2 * * *", "0 */6 * * *", "15 9 * * MON-FRI", "@daily", "0 0 1 * *", "*/15 8-18 * * 1-5"}
	zones     = []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "Asia/Kolkata", "America/Los_Angeles", "Asia/Kathmandu"}
	shorts    = []string{"10m", "1h", "1d"}
	checkRuns = []string{"1m", "5m", "5m", "5m", "15m", "15m", "1h", "1h"}
)

// bundle is the account's monitors: its checks, the deadline burst's
// monitors (due-*: every minute, no grace), then its other ping monitors
// (job-*), the first changed of which have another grace time.
func (a *account) bundle(checkURL string, changed int) []map[string]any {
	out := make([]map[string]any, 0, a.checks+a.jobs)
	for k := range a.checks {
		out = append(out, map[string]any{"kind": "http_check", "name": fmt.Sprintf("site-%05d", k),
			"schedule": checkRuns[k%len(checkRuns)],
			"config":   map[string]any{"url": fmt.Sprintf("%s/check?a=%d&k=%d", checkURL, a.index, k), "expected_status": 200}})
	}
	for k := range a.due {
		out = append(out, map[string]any{"kind": "ping", "name": dueName(k), "schedule": "* * * * *",
			"timezone": zones[k%len(zones)], "grace_seconds": 0, "timeout_seconds": 3600, "tags": []string{"bench", "due"}})
	}
	for k := range a.jobs - a.due {
		out = append(out, job(k, k < changed))
	}
	return out
}

// dueName is the name of the deadline burst's k-th monitor of an account.
func dueName(k int) string { return fmt.Sprintf("due-%05d", k) }

// job is the k-th ping monitor of an account of the mix.
func job(k int, changed bool) map[string]any {
	m := map[string]any{"kind": "ping", "name": fmt.Sprintf("job-%06d", k), "timeout_seconds": 3600,
		"grace_seconds": 300, "tags": []string{"bench", fmt.Sprintf("team-%d", k%20)}, "project": fmt.Sprintf("proj-%d", k%10)}
	if changed {
		m["grace_seconds"] = 600
	}
	switch k % 6 {
	case 0, 1:
		m["expected_interval_seconds"] = intervals[(k/6)%len(intervals)]
	case 2, 3, 4:
		m["schedule"], m["timezone"] = crons[(k/6)%len(crons)], zones[(k/2)%len(zones)]
	default:
		m["schedule"] = shorts[(k/6)%len(shorts)]
	}
	return m
}
