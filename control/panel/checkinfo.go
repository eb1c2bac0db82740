package panel

import (
	"strconv"
	"strings"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/schedule"
)

// checkInfo is what a check checks, as its page says it.
type checkInfo struct {
	// Request is an http_check's method and URL; Domain an ssl_check's
	// host and port; Connect a tcp_check's; Question a dns_check's name,
	// type and server.
	Request, Domain, Connect, Question string
	// Sends says what an http_check sends besides its request line (the
	// names of its headers, never their values; a body; basic auth; a
	// client certificate) and what a tcp_check writes.
	Sends []string
	// TLS says how an https request or a handshake trusts the server
	// ("a private CA", "certificate not verified").
	TLS string
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
		switch {
		case c.ExpectedStatus != nil:
			ci.Expects = append(ci.Expects, "status "+itoa(int(c.GetExpectedStatus())))
		case len(c.GetExpectedStatuses()) > 0:
			ci.Expects = append(ci.Expects, "status "+strings.Join(c.GetExpectedStatuses(), " or "))
		default:
			ci.Expects = append(ci.Expects, "status 2xx or 3xx")
		}
		if c.GetExpectedContent() != "" {
			ci.Expects = append(ci.Expects, "content containing “"+c.GetExpectedContent()+"”")
		}
		if c.GetContentAbsent() != "" {
			ci.Expects = append(ci.Expects, "no “"+c.GetContentAbsent()+"”")
		}
		for _, a := range c.GetJsonPath() {
			ci.Expects = append(ci.Expects, a.GetPath()+" = "+a.GetEqualsJson())
		}
		if ms := c.GetMaxResponseMs(); ms > 0 {
			ci.Expects = append(ci.Expects, "an answer within "+itoa(int(ms))+" ms")
		}
		var names []string
		for _, h := range c.GetHeaders() {
			names = append(names, h.GetName())
		}
		if len(names) > 0 {
			ci.Sends = append(ci.Sends, "headers "+strings.Join(names, ", "))
		}
		if c.GetBody() != "" {
			ci.Sends = append(ci.Sends, "a body of "+itoa(len(c.GetBody()))+" bytes")
		}
		if c.GetBasicAuth() != nil {
			ci.Sends = append(ci.Sends, "basic auth as "+c.GetBasicAuth().GetUsername())
		}
		if c.GetClientCert() != "" {
			ci.Sends = append(ci.Sends, "a client certificate")
		}
		if c.GetNoRedirects() {
			ci.Sends = append(ci.Sends, "no redirects followed")
		}
		ci.TLS = trustOf(c)
		ci.TimeoutS = c.GetTimeout()
	case state.KindSSLCheck:
		ci.Domain = c.GetDomain()
		if p := c.GetPort(); p > 0 {
			ci.Domain += ":" + itoa(int(p))
		} else if !strings.Contains(ci.Domain, ":") {
			ci.Domain += ":443"
		}
		ci.WarningDays, ci.AlertDays = c.GetWarningDays(), c.GetAlertDays()
		ci.TLS = trustOf(c)
	case state.KindTCPCheck:
		ci.Connect = c.GetHost() + ":" + itoa(int(c.GetPort()))
		if c.GetSend() != "" {
			ci.Sends = append(ci.Sends, strconv.Quote(c.GetSend()))
		}
		if c.GetExpect() != "" {
			ci.Expects = append(ci.Expects, "an answer containing "+strconv.Quote(c.GetExpect()))
		} else {
			ci.Expects = append(ci.Expects, "a connection")
		}
		ci.TimeoutS = c.GetTimeout()
	case state.KindDNSCheck:
		typ := c.GetDnsType()
		if typ == "" {
			typ = "A"
		}
		ci.Question = typ + " " + c.GetDnsName()
		if srv := c.GetDnsServer(); srv != "" {
			ci.Question += " @" + srv
		}
		if len(c.GetDnsExpected()) > 0 {
			ci.Expects = append(ci.Expects, "answers including "+strings.Join(c.GetDnsExpected(), ", "))
		} else {
			ci.Expects = append(ci.Expects, "an answer")
		}
		ci.TimeoutS = c.GetTimeout()
	}
	return ci
}

// trustOf says how a check's TLS trusts the server: its own CA besides the
// system roots, or not at all.
func trustOf(c interface {
	GetCa() string
	GetTlsSkipVerify() bool
}) string {
	switch {
	case c.GetTlsSkipVerify():
		return "certificate not verified"
	case c.GetCa() != "":
		return "the system roots and the check's own CA"
	}
	return ""
}
