package panel

import (
	"strings"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/schedule"
)

// checkInfo is what a check checks, as its page says it.
type checkInfo struct {
	// Request is an http_check's method and URL; Domain an ssl_check's
	// host and port.
	Request, Domain string
	// Expects lists an http_check's assertions ("status 200", "content
	// containing …").
	Expects []string
	// TimeoutS is an http_check's request timeout, in seconds.
	TimeoutS int64
	// WarningDays and AlertDays are an ssl_check's thresholds.
	WarningDays, AlertDays int64
	// Schedule is the check's, with how it reads ("every 5m", "cron,
	// UTC").
	Schedule, ScheduleNote string
	// Regions run the check (none: the control plane), Confirm of them
	// must see it fail.
	Regions []string
	Confirm int64
}

// newCheckInfo describes check m (nil for a ping monitor).
func newCheckInfo(m *statev1.Monitor) *checkInfo {
	if m.GetKind() == state.KindPing {
		return nil
	}
	c := m.GetConfig()
	ci := &checkInfo{Schedule: m.GetSchedule(), Regions: m.GetRegions(), Confirm: max(1, m.GetConfirmRegions())}
	if sc, err := schedule.ParseIn(ci.Schedule, m.GetTimezone()); err != nil {
		ci.ScheduleNote = "invalid"
	} else if _, every := sc.Interval(); every {
		ci.ScheduleNote = "every " + ci.Schedule
	} else {
		ci.ScheduleNote = "cron, " + sc.Zone().String()
	}
	switch m.GetKind() {
	case state.KindHTTPCheck:
		method := c.GetMethod()
		if method == "" {
			method = "GET"
		}
		ci.Request = method + " " + c.GetUrl()
		if c.ExpectedStatus != nil {
			ci.Expects = append(ci.Expects, "status "+itoa(int(c.GetExpectedStatus())))
		}
		if c.GetExpectedContent() != "" {
			ci.Expects = append(ci.Expects, "content containing “"+c.GetExpectedContent()+"”")
		}
		ci.TimeoutS = c.GetTimeout()
	case state.KindSSLCheck:
		ci.Domain = c.GetDomain()
		if !strings.Contains(ci.Domain, ":") {
			ci.Domain += ":443"
		}
		ci.WarningDays, ci.AlertDays = c.GetWarningDays(), c.GetAlertDays()
	}
	return ci
}
