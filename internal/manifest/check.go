package manifest

import (
	"net/url"
	"strconv"
	"strings"
)

// Bounds and defaults of the check config.
const (
	MinCheckTimeout        = 1
	MaxCheckTimeout        = 60
	DefaultCheckTimeout    = 10
	DefaultMethod          = "GET"
	MinStatus              = 100
	MaxStatus              = 599
	MaxExpectedContent     = 4096
	MaxURL                 = 2048
	MinDays                = 1
	MaxDays                = 365
	DefaultWarningDays     = 30
	DefaultAlertDays       = 7
	maxDomain              = 253
	methodsList            = "GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS"
	scheduleRequiredReason = "an interval such as 5m or a 5-field cron expression"
)

var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// check decodes the fields of an http_check or ssl_check.
func (d *decoder) check(m *Manifest) {
	d.schedule(m, true)
	m.Regions = d.regions()
	if n, ok := d.integer("confirm_regions", 1, MaxRegions, CodeConfirmRegionsInvalid, false); ok {
		switch {
		case len(m.Regions) == 0 && d.failed("regions"):
			// Reported as regions_invalid; how many to confirm cannot be told.
		case len(m.Regions) == 0:
			d.add("confirm_regions", CodeConfirmRegionsInvalid, "is only allowed with regions")
		case n > int64(len(m.Regions)):
			d.add("confirm_regions", CodeConfirmRegionsInvalid, "must be at most the number of regions (%d), got %d", len(m.Regions), n)
		default:
			m.ConfirmRegions = n
		}
	}

	m.FailureThreshold, _ = d.integer("failure_threshold", MinFailureThreshold, MaxFailureThreshold, CodeFailureThresholdOutOfRange, false)

	c := d.object("config")
	switch m.Kind {
	case KindHTTP:
		c.httpConfig(&m.Config)
		c.httpOptions(&m.Config)
		c.unknown(httpKeys, m.Kind)
	case KindSSL:
		c.sslConfig(&m.Config)
		c.sslOptions(&m.Config)
		c.unknown(sslKeys, m.Kind)
	case KindTCP:
		c.tcpConfig(&m.Config)
		c.unknown(tcpKeys, m.Kind)
	case KindDNS:
		c.dnsConfig(&m.Config)
		c.unknown(dnsKeys, m.Kind)
	}
}

// httpConfig decodes the config of an http_check.
func (d *decoder) httpConfig(c *Config) {
	if s, ok := d.str("url", CodeURLInvalid); ok {
		if why := urlProblem(s); why != "" {
			d.add("url", CodeURLInvalid, "must be an absolute http or https URL: %s", why)
		}
		c.URL = s
	} else if !d.has("url") {
		d.missing("url", CodeURLInvalid, "an absolute http or https URL")
	}
	if s, ok := d.str("method", CodeMethodInvalid); ok {
		if !contains(methods, strings.ToUpper(s)) {
			d.add("method", CodeMethodInvalid, "must be %s, got %q", methodsList, s)
		}
		c.Method = s
	}
	if n, ok := d.integer("timeout", MinCheckTimeout, MaxCheckTimeout, CodeCheckTimeoutInvalid, false); ok {
		c.Timeout = int(n)
	}
	d.expectedStatus(c)
	c.ExpectedContent = d.content("expected_content")
}

// urlProblem says what is wrong with an http_check URL, or "" when nothing is.
func urlProblem(s string) string {
	if len(s) > MaxURL {
		return "longer than " + strconv.Itoa(MaxURL) + " bytes"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "contains white space or control characters"
	}
	u, err := url.Parse(s)
	if err != nil {
		return err.Error()
	}
	if sc := strings.ToLower(u.Scheme); sc != "http" && sc != "https" {
		return "the scheme is not http or https"
	}
	if u.Hostname() == "" {
		return "no host"
	}
	if p := u.Port(); p != "" && !portOK(p) {
		return "the port is not 1 to 65535"
	}
	return ""
}

// sslConfig decodes the config of an ssl_check.
func (d *decoder) sslConfig(c *Config) {
	if s, ok := d.str("domain", CodeDomainInvalid); ok {
		if !domainOK(s) {
			d.add("domain", CodeDomainInvalid, "must be a host name, optionally with :port, got %q", s)
		}
		c.Domain = s
	} else if !d.has("domain") {
		d.missing("domain", CodeDomainInvalid, "a host name, optionally with :port")
	}
	w, wok := d.integer("warning_days", MinDays, MaxDays, CodeDaysInvalid, false)
	a, aok := d.integer("alert_days", MinDays, MaxDays, CodeDaysInvalid, false)
	c.WarningDays, c.AlertDays = int(w), int(a)
	if !wok && d.has("warning_days") || !aok && d.has("alert_days") {
		return
	}
	if eff := canonicalConfig(KindSSL, *c); eff.AlertDays > eff.WarningDays {
		d.add("alert_days", CodeDaysInvalid, "(%d) must not exceed warning_days (%d)", eff.AlertDays, eff.WarningDays)
	}
}

// domainOK reports whether s is a DNS host name (letters, digits and hyphens in labels
// of 1 to 63, 253 in all; no trailing dot) with an optional :port.
func domainOK(s string) bool {
	host, port, hasPort := strings.Cut(s, ":")
	if hasPort && !portOK(port) {
		return false
	}
	if host == "" || len(host) > maxDomain {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		if strings.Trim(strings.ToLower(label), "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
}

// portOK reports whether p is a decimal port 1 to 65535.
func portOK(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && p[0] != '+' && p[0] != '0'
}
