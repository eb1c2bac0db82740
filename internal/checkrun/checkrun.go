// Package checkrun holds what every runner of a check shares, whether the
// control plane's leader (control/checks) or an edge agent (agent/runner):
// the probe target of a stored CheckConfig, and how an attempt's result
// fills the execution that records it. It is pure: no clock, no I/O.
//
// It imports the generated raft types, so it cannot live in internal/probe
// (which stays free of internal/gen).
package checkrun

import (
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/probe"
)

// Execution statuses (decisions.md section 6); the same strings as
// control/state's Exec* constants.
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
)

// Target is the probe target of a check's stored config, field for field.
func Target(c *raftv1.CheckConfig) probe.Target {
	return probe.Target{
		URL: c.GetUrl(), Method: c.GetMethod(), Timeout: time.Duration(c.GetTimeout()) * time.Second,
		ExpectedStatus: int(c.GetExpectedStatus()), ExpectedContent: c.GetExpectedContent(),
		Domain: c.GetDomain(), WarningDays: int(c.GetWarningDays()), AlertDays: int(c.GetAlertDays()),
	}
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
	ex.Http, ex.Ssl = nil, nil
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
}
