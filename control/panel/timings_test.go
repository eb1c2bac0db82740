package panel

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestExecTimingsShowPhasesThatHappened: an answer shows its status and
// the phases that took time; an attempt without one says why, with the
// phases before it; a check without HTTP details its duration.
func TestExecTimingsShowPhasesThatHappened(t *testing.T) {
	for _, tc := range []struct {
		e    *raftv1.Execution
		want string
	}{
		{&raftv1.Execution{Status: "success", Http: &raftv1.ExecutionHTTP{StatusCode: 200, DnsMs: 4, ConnectMs: 11, TlsMs: 23, TtfbMs: 58, TotalMs: 103}},
			"200 · dns 4 · connect 11 · tls 23 · ttfb 58 · total 103\u00a0ms"},
		{&raftv1.Execution{Status: "failed", Error: "the answer's status is 503, want 200", ErrorKind: "unexpected_status", Http: &raftv1.ExecutionHTTP{StatusCode: 503, TotalMs: 9}},
			"503 · total 9\u00a0ms"},
		{&raftv1.Execution{Status: "failed", Error: "cannot connect to 10.0.0.1:443: connection refused", ErrorKind: "connect", Http: &raftv1.ExecutionHTTP{}},
			"connection refused"},
		{&raftv1.Execution{Status: "retrying", Error: "cannot connect to [::1]:80: no route to host", ErrorKind: "connect"},
			"no route to host"},
		{&raftv1.Execution{Status: "failed", Error: "no complete answer within 10s", ErrorKind: "timeout", Http: &raftv1.ExecutionHTTP{DnsMs: 3, ConnectMs: 5}},
			"timed out · dns 3 · connect 5\u00a0ms"},
		{&raftv1.Execution{Status: "failed", Error: "cannot resolve nowhere.example: no such host", ErrorKind: "dns"},
			"DNS: no such host"},
		{&raftv1.Execution{Status: "failed", Error: "TLS handshake failed: EOF", ErrorKind: "tls_handshake", DurationMs: 20},
			"TLS handshake failed"},
		{&raftv1.Execution{Status: "success", DurationMs: 40, Ssl: &raftv1.ExecutionSSL{DaysLeft: 90}}, "40\u00a0ms"},
		{&raftv1.Execution{Status: "running"}, ""},
	} {
		if got := execTimings(tc.e); got != tc.want {
			t.Errorf("%s %q: %q, want %q", tc.e.GetStatus(), tc.e.GetError(), got, tc.want)
		}
	}
}
