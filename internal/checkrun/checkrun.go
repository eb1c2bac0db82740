// Package checkrun holds what every runner of a check shares, whether the
// control plane's leader (control/checks) or an edge agent (agent/runner):
// the prober of each kind, the probe target of a stored CheckConfig, and
// how an attempt's result fills the execution that records it. It is
// pure: no clock, no I/O.
//
// It imports the generated raft types, so it cannot live in internal/probe
// (which stays free of internal/gen).
package checkrun

import (
	"time"
	"unicode/utf8"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/probe"
	"lookout/internal/probe/dnsprobe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/probe/tcpprobe"
	"lookout/internal/probe/tlsprobe"
)

// Execution statuses; control/state's Exec*
// constants are these.
const (
	StatusRunning  = "running"
	StatusRetrying = "retrying"
	StatusSuccess  = "success"
	StatusFailed   = "failed"
)

// Check kinds with a prober.
const (
	KindHTTPCheck = "http_check"
	KindSSLCheck  = "ssl_check"
	KindTCPCheck  = "tcp_check"
	KindDNSCheck  = "dns_check"
)

// Probers returns the prober of every check kind, made with opts: what
// the control plane's scheduler and an agent's runner run checks with.
func Probers(opts probe.Options) map[string]probe.Prober {
	return map[string]probe.Prober{
		KindHTTPCheck: httpprobe.New(opts),
		KindSSLCheck:  tlsprobe.New(opts),
		KindTCPCheck:  tcpprobe.New(opts),
		KindDNSCheck:  dnsprobe.New(opts, dnsprobe.Options{}),
	}
}

// Target is the probe target of a check's stored config, field for field.
func Target(c *raftv1.CheckConfig) probe.Target {
	t := probe.Target{
		URL: c.GetUrl(), Method: c.GetMethod(), Timeout: time.Duration(c.GetTimeout()) * time.Second,
		ExpectedStatus: int(c.GetExpectedStatus()), ExpectedStatuses: c.GetExpectedStatuses(),
		ExpectedContent: c.GetExpectedContent(), ContentAbsent: c.GetContentAbsent(), Body: c.GetBody(),
		NoRedirects: c.GetNoRedirects(), MaxResponse: time.Duration(c.GetMaxResponseMs()) * time.Millisecond,
		CA: c.GetCa(), TLSSkipVerify: c.GetTlsSkipVerify(), ClientCert: c.GetClientCert(), ClientKey: c.GetClientKey(),
		Domain: c.GetDomain(), Port: int(c.GetPort()), WarningDays: int(c.GetWarningDays()), AlertDays: int(c.GetAlertDays()),
		Host: c.GetHost(), Send: c.GetSend(), Expect: c.GetExpect(),
		Name: c.GetDnsName(), RecordType: c.GetDnsType(), Server: c.GetDnsServer(), Expected: c.GetDnsExpected(),
	}
	for _, h := range c.GetHeaders() {
		t.Headers = append(t.Headers, probe.Header{Name: h.GetName(), Value: h.GetValue()})
	}
	if a := c.GetBasicAuth(); a != nil {
		t.BasicAuth = &probe.BasicAuth{Username: a.GetUsername(), Password: a.GetPassword()}
	}
	for _, a := range c.GetJsonPath() {
		t.JSONPath = append(t.JSONPath, probe.JSONAssertion{Path: a.GetPath(), Equals: a.GetEqualsJson()})
	}
	return t
}

// Fill writes what attempt number attempt saw into ex: attempts,
// duration, error and its kind, and the HTTP or SSL details. The status
// is the caller's to set.
func Fill(ex *raftv1.Execution, res probe.Result, attempt int) {
	ex.Attempts = int64(attempt)
	ex.DurationMs = res.Duration.Milliseconds()
	ex.Error, ex.ErrorKind = "", ""
	if res.Err != nil {
		ex.Error, ex.ErrorKind = res.Err.Message, string(res.Err.Kind)
	}
	ex.Http, ex.Ssl, ex.Tcp, ex.Dns = nil, nil, nil, nil
	if h := res.HTTP; h != nil {
		ex.Http = &raftv1.ExecutionHTTP{
			StatusCode: int64(h.StatusCode), ResponseBytes: h.ResponseBytes,
			DnsMs: h.Timings.DNS.Milliseconds(), ConnectMs: h.Timings.Connect.Milliseconds(), TlsMs: h.Timings.TLS.Milliseconds(),
			TtfbMs: h.Timings.TTFB.Milliseconds(), TotalMs: h.Timings.Total.Milliseconds(),
		}
	}
	if c := res.SSL; c != nil {
		ex.Ssl = &raftv1.ExecutionSSL{
			ExpiresUnixMs: c.ExpiresAt.UnixMilli(), DaysLeft: int64(c.DaysLeft), Issuer: c.Issuer, Subject: c.Subject,
			DnsNames: append([]string(nil), c.DNSNames...), ChainValid: c.ChainValid, HostnameValid: c.HostnameValid, Level: string(c.Level),
		}
	}
	if c := res.TCP; c != nil {
		ex.Tcp = &raftv1.ExecutionTCP{ConnectMs: c.Connect.Milliseconds()}
	}
	if d := res.DNS; d != nil {
		ex.Dns = &raftv1.ExecutionDNS{Answers: append([]string{}, d.Answers...), RttMs: d.RTT.Milliseconds()}
	}
}

// The bounds of an execution's fields (control/state's MaxExecution* are
// these): a longer value is cut by Bound, so the control plane never
// refuses a verdict for its size.
const (
	MaxError    = 1024                  // bytes of error
	MaxText     = 512                   // bytes of issuer, subject
	MaxDNSNames = 16                    // entries of dns_names
	MaxDNSName  = 253                   // bytes of one DNS name
	MaxLabel    = 64                    // bytes of region, agent, error_kind
	MaxAnswers  = dnsprobe.MaxAnswers   // entries of dns answers
	MaxAnswer   = dnsprobe.MaxAnswerLen // bytes of one dns answer
)

// Bound cuts ex's free-text fields to the bounds above, without splitting
// a UTF-8 sequence.
func Bound(ex *raftv1.Execution) {
	ex.Error = cut(ex.GetError(), MaxError)
	ex.ErrorKind = cut(ex.GetErrorKind(), MaxLabel)
	if s := ex.GetSsl(); s != nil {
		s.Issuer, s.Subject = cut(s.GetIssuer(), MaxText), cut(s.GetSubject(), MaxText)
		if len(s.DnsNames) > MaxDNSNames {
			s.DnsNames = s.DnsNames[:MaxDNSNames]
		}
		for i, n := range s.DnsNames {
			s.DnsNames[i] = cut(n, MaxDNSName)
		}
	}
	if d := ex.GetDns(); d != nil {
		if len(d.Answers) > MaxAnswers {
			d.Answers = d.Answers[:MaxAnswers]
		}
		for i, a := range d.Answers {
			d.Answers[i] = cut(a, MaxAnswer)
		}
	}
}

// cut shortens s to at most n bytes without splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
