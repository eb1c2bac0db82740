package channel

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"lookout/internal/schedule"
)

// maxDetail bounds the part of a summary taken from an event's message or
// an execution's error, in characters.
const maxDetail = 120

// Summary is the alert in one line a person reads, the title of chat
// messages and e-mails and the webhook body's summary: "nightly-backup
// missed its run expected at 02:30 UTC", "home page failed: answered 503,
// expected 200", "nightly-backup recovered after 12 min down". Times are
// in the monitor's time zone (Monitor.Timezone; UTC when it has none), so
// a run expected on a schedule in a zone reads as the schedule does.
func (a Alert) Summary() string {
	name := a.Monitor.DisplayName
	if name == "" {
		name = a.Monitor.Name
	}
	if r := a.Region; r != nil && a.Type == AgentOffline {
		return fmt.Sprintf("Region %s: no agent connected, %d monitors unknown", r.Name, r.Monitors)
	} else if r != nil {
		return fmt.Sprintf("Region %s: agents back online, %d monitors judged again", r.Name, r.Monitors)
	}
	switch a.Type {
	case MonitorMissed:
		if a.ExpectedAt.IsZero() {
			return name + " missed its run"
		}
		return name + " missed its run expected at " + a.clock(a.ExpectedAt)
	case MonitorFailed:
		return name + " failed" + a.failure()
	case MonitorTimeout:
		if t := a.Monitor.TimeoutSeconds; t > 0 {
			return name + " timed out: still running after its " + Duration(time.Duration(t)*time.Second) + " timeout"
		}
		return name + " timed out"
	case MonitorSlow:
		if e := a.Event; e != nil && e.Duration != nil && a.Monitor.TimeoutSeconds > 0 {
			return fmt.Sprintf("%s ran %s, longer than its %s timeout", name,
				Duration(time.Duration(*e.Duration*float64(time.Second))), Duration(time.Duration(a.Monitor.TimeoutSeconds)*time.Second))
		}
		return name + " ran longer than its timeout"
	case MonitorRecovered, CheckRecovered:
		return name + a.recovery()
	case MonitorReminder, CheckReminder:
		return name + " is still down" + since(a.DownSince, a.OccurredAt)
	case CheckFailed:
		return name + " failed" + a.inRegions() + a.checkFailure()
	case SSLWarning, SSLAlert:
		return name + a.inRegions() + ": " + a.certificate()
	case Test:
		return "Test message from Lookout: this channel works"
	}
	return name + " " + a.Type
}

// clock is t as people read it in the monitor's zone: "02:30 UTC", with
// the day when it is not the day the alert occurred ("Mon 2 Mar 02:30
// Europe/Berlin").
func (a Alert) clock(t time.Time) string {
	loc, zone := time.UTC, "UTC"
	if tz := a.Monitor.Timezone; tz != "" {
		if l, err := schedule.LoadZone(tz); err == nil {
			loc, zone = l, tz
		}
	}
	t = t.In(loc)
	at := a.OccurredAt.In(loc)
	if y, m, d := t.Date(); y != at.Year() || m != at.Month() || d != at.Day() {
		return t.Format("Mon 2 Jan 15:04 ") + zone
	}
	return t.Format("15:04 ") + zone
}

// failure says how a ping failed: its exit code and the first line of
// its message, when it has them.
func (a Alert) failure() string {
	e := a.Event
	if e == nil {
		return ""
	}
	out := ""
	if e.ExitCode != nil {
		out = " with exit code " + strconv.FormatInt(*e.ExitCode, 10)
	}
	if msg := firstLine(e.Message); msg != "" {
		out += ": " + msg
	}
	return out
}

// checkFailure says why a check failed: the status it answered against
// the one expected, or the execution's error.
func (a Alert) checkFailure() string {
	e := a.Event
	if e == nil || e.Execution == nil {
		return ""
	}
	x := e.Execution
	if h := x.HTTP; h != nil && h.StatusCode != 0 {
		want := a.Monitor.ExpectedStatus
		switch {
		case want != 0 && h.StatusCode != want:
			return fmt.Sprintf(": answered %d, expected %d", h.StatusCode, want)
		case want == 0 && (h.StatusCode < 200 || h.StatusCode > 399):
			return fmt.Sprintf(": answered %d, expected 2xx or 3xx", h.StatusCode)
		}
	}
	if msg := firstLine(x.Error); msg != "" {
		return ": " + msg
	}
	return ""
}

// certificate says what an ssl_check saw of the certificate of its
// domain: invalid (the execution's error), or how soon it expires.
func (a Alert) certificate() string {
	what := "the certificate"
	if d := a.Monitor.Domain; d != "" {
		what += " of " + d
	}
	var x *Execution
	if a.Event != nil {
		x = a.Event.Execution
	}
	if x == nil || x.SSL == nil {
		return what + " needs attention"
	}
	s := x.SSL
	if !s.ChainValid || !s.HostnameValid || s.ExpiresAt.Before(x.FinishedAt) {
		if msg := firstLine(x.Error); msg != "" {
			return what + " is not valid: " + msg
		}
		return what + " is not valid"
	}
	days := "in " + strconv.FormatInt(s.DaysLeft, 10) + " days"
	if s.DaysLeft == 1 {
		days = "in 1 day"
	} else if s.DaysLeft < 1 {
		days = "within a day"
	}
	return what + " expires " + days + " (" + s.ExpiresAt.UTC().Format("2 Jan 2006") + ")"
}

// recovery says how long the problem a recovery ends lasted: "down" after
// a failure, plainly after a warning (a slow run, a certificate to renew).
func (a Alert) recovery() string {
	if a.DownSeconds != nil && *a.DownSeconds > 0 { // the alerted failure's own count
		return " recovered after " + Duration(time.Duration(*a.DownSeconds)*time.Second) + " down"
	}
	if a.ProblemSince.IsZero() || !a.OccurredAt.After(a.ProblemSince) {
		return " recovered"
	}
	d := Duration(a.OccurredAt.Sub(a.ProblemSince))
	if a.ProblemType == MonitorSlow || a.ProblemType == SSLWarning {
		return " recovered after " + d
	}
	return " recovered after " + d + " down"
}

// inRegions names the regions that saw a check fail, when there are any.
func (a Alert) inRegions() string {
	if len(a.Regions) == 0 {
		return ""
	}
	return " in " + strings.Join(a.Regions, ", ")
}

// firstLine is the first non-empty line of s, trimmed and at most
// maxDetail characters.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return Fit(line, maxDetail, nil)
		}
	}
	return ""
}

// Duration is d as people say it, to the minute past a minute: "45 s",
// "12 min", "1 h", "2 h 5 min", "3 days".
func Duration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Round(time.Second)/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + " h"
		}
		return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " days"
}
