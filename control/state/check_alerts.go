package state

import raftv1 "lookout/internal/gen/lookout/raft/v1"

// The alerts of checks.
const (
	AlertCheckFailed    = "check.failed"
	AlertCheckRecovered = "check.recovered"
	AlertSSLWarning     = "ssl.warning"
	AlertSSLAlert       = "ssl.alert"
)

// sslLevelWarning is probe.LevelWarning: a valid certificate within
// warning_days.
const sslLevelWarning = "warning"

// checkAlerts decides the alerts a check's final execution e raises, given
// the standing alert (the last one raised and not yet recovered from), and
// returns them in order with the new standing alert. A failure alerts once
// per outage: check.failed, or ssl.alert for an ssl_check whose handshake
// showed an invalid or expiring certificate. A success after a failure or
// after ssl.warning is check.recovered. ssl.warning is raised once when a
// successful ssl_check's certificate is within warning_days.
func checkAlerts(kind, standing string, e *raftv1.Execution) (raise []string, next string) {
	failing := standing == AlertCheckFailed || standing == AlertSSLAlert
	if e.GetStatus() == ExecFailed {
		if failing {
			return nil, standing
		}
		want := AlertCheckFailed
		if kind == KindSSLCheck && e.GetSsl() != nil {
			want = AlertSSLAlert
		}
		return []string{want}, want
	}
	warn := kind == KindSSLCheck && e.GetSsl().GetLevel() == sslLevelWarning
	switch {
	case failing && warn:
		return []string{AlertCheckRecovered, AlertSSLWarning}, AlertSSLWarning
	case failing || standing == AlertSSLWarning && !warn:
		return []string{AlertCheckRecovered}, ""
	case standing == "" && warn:
		return []string{AlertSSLWarning}, AlertSSLWarning
	}
	return nil, standing
}
