package manage

import (
	"net/http"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// executionJSON is one execution of a check.
// duration_ms is the last attempt's; error is there when an attempt
// failed (a failed or retrying execution).
type executionJSON struct {
	ID         string             `json:"id"`
	Region     string             `json:"region"`
	Agent      string             `json:"agent,omitempty"`
	AgentID    string             `json:"agent_id,omitempty"`
	Slot       string             `json:"slot"`
	Status     string             `json:"status"`
	Attempts   int64              `json:"attempts"`
	StartedAt  *string            `json:"started_at"`
	FinishedAt *string            `json:"finished_at"`
	DurationMs int64              `json:"duration_ms"`
	Error      string             `json:"error,omitempty"`
	HTTP       *executionHTTPJSON `json:"http,omitempty"`
	SSL        *executionSSLJSON  `json:"ssl,omitempty"`
	TCP        *executionTCPJSON  `json:"tcp,omitempty"`
	DNS        *executionDNSJSON  `json:"dns,omitempty"`
}

// executionTCPJSON is what a tcp_check's last attempt saw.
type executionTCPJSON struct {
	ConnectMs int64 `json:"connect_ms"`
}

// executionDNSJSON is what a dns_check's last attempt saw.
type executionDNSJSON struct {
	Answers []string `json:"answers"`
	RTTMs   int64    `json:"rtt_ms"`
}

type executionHTTPJSON struct {
	StatusCode    int64 `json:"status_code"`
	ResponseBytes int64 `json:"response_bytes"`
	TimingsMs     struct {
		DNS     int64 `json:"dns"`
		Connect int64 `json:"connect"`
		TLS     int64 `json:"tls"`
		TTFB    int64 `json:"ttfb"`
		Total   int64 `json:"total"`
	} `json:"timings_ms"`
}

type executionSSLJSON struct {
	ExpiresAt     *string  `json:"expires_at"`
	DaysLeft      int64    `json:"days_left"`
	Issuer        string   `json:"issuer"`
	Subject       string   `json:"subject"`
	DNSNames      []string `json:"dns_names"`
	ChainValid    bool     `json:"chain_valid"`
	HostnameValid bool     `json:"hostname_valid"`
}

// checkStatus is the read-only status of a check in
// GET /api/v1/monitors/{uuid}. Like a ping
// monitor's, it is not part of the manifest.
type checkStatus struct {
	State           string  `json:"state"`
	LastExecutionAt *string `json:"last_execution_at"`
	NextRunAt       *string `json:"next_run_at"`
	LastStatus      *string `json:"last_status"`
	DaysLeft        *int64  `json:"days_left,omitempty"`
	quietStatus
}

// handleExecutions serves GET
// /api/v1/monitors/{uuid}/executions?limit=N&before=C: a check's
// executions, newest slot first (a ping monitor has none), below the
// cursor C when given, and next_before while older ones remain.
func (a *API) handleExecutions(w http.ResponseWriter, r *http.Request) {
	limit, ok := historyLimit(w, r)
	if !ok {
		return
	}
	before, ok := executionsBefore(w, r)
	if !ok {
		return
	}
	if !a.consistent(w, r) {
		return
	}
	m, ok := a.monitor(w, r)
	if !ok {
		return
	}
	execs, err := a.state.ExecutionsBefore(m.GetAccountId(), m.GetUuid(), before, limit+1)
	if err != nil {
		a.internal(w, err)
		return
	}
	body := map[string]any{}
	if len(execs) > limit {
		execs = execs[:limit]
		body["next_before"] = executionCursor(state.PosOf(execs[limit-1]))
	}
	out := make([]executionJSON, 0, len(execs))
	for _, e := range execs {
		out = append(out, toExecutionJSON(e))
	}
	body["executions"] = out
	writeJSON(w, http.StatusOK, body)
}

func toExecutionJSON(e *raftv1.Execution) executionJSON {
	out := executionJSON{
		ID: state.ExecutionID(e.GetCheckUuid(), e.GetRegion(), e.GetSlotUnixMs()), Region: e.GetRegion(), Agent: e.GetAgent(), AgentID: e.GetAgentId(),
		Slot: *rfc3339(e.GetSlotUnixMs()), Status: e.GetStatus(), Attempts: e.GetAttempts(),
		StartedAt: optTime(e.GetStartedUnixMs()), FinishedAt: optTime(e.GetFinishedUnixMs()), DurationMs: e.GetDurationMs(),
		Error: e.GetError(),
	}
	if h := e.GetHttp(); h != nil {
		out.HTTP = &executionHTTPJSON{StatusCode: h.GetStatusCode(), ResponseBytes: h.GetResponseBytes()}
		t := &out.HTTP.TimingsMs
		t.DNS, t.Connect, t.TLS, t.TTFB, t.Total = h.GetDnsMs(), h.GetConnectMs(), h.GetTlsMs(), h.GetTtfbMs(), h.GetTotalMs()
	}
	if s := e.GetSsl(); s != nil {
		out.SSL = &executionSSLJSON{
			ExpiresAt: optTime(s.GetExpiresUnixMs()), DaysLeft: s.GetDaysLeft(), Issuer: s.GetIssuer(), Subject: s.GetSubject(),
			DNSNames: append([]string{}, s.GetDnsNames()...), ChainValid: s.GetChainValid(), HostnameValid: s.GetHostnameValid(),
		}
	}
	if c := e.GetTcp(); c != nil {
		out.TCP = &executionTCPJSON{ConnectMs: c.GetConnectMs()}
	}
	if d := e.GetDns(); d != nil {
		out.DNS = &executionDNSJSON{Answers: append([]string{}, d.GetAnswers()...), RTTMs: d.GetRttMs()}
	}
	return out
}

// optTime is the RFC 3339 form of ms, nil for 0 (not yet).
func optTime(ms int64) *string {
	if ms == 0 {
		return nil
	}
	return rfc3339(ms)
}

// withCheckStatus adds the status of a check to its manifest: paused when
// disabled, unknown when every one of its regions is offline, pending
// before its first verdict, else up or down by its
// newest verdict; next_run_at when the leader runs it (enabled, without
// regions).
func (a *API) withCheckStatus(m *statev1.Monitor) monitorWithStatus {
	out := monitorWithStatus{Manifest: toManifest(m)}
	cs, err := a.state.CheckStatus(m.GetUuid())
	if err != nil {
		a.log.Warn("reading a check's status failed", "check", m.GetUuid(), "error", err)
		cs = new(statev1.CheckStatus)
	}
	s := &checkStatus{State: "pending", LastExecutionAt: optTime(cs.GetLastExecutionUnixMs()), quietStatus: a.quietStatusOf(m)}
	switch {
	case !m.GetEnabled() || m.GetQuiet().GetPaused():
		s.State = stateStatusPaused
	case a.inOfflineRegion(m):
		s.State = stateUnknown
	case cs.GetVerdict() == state.ExecSuccess:
		s.State = "up"
	case cs.GetVerdict() == state.ExecFailed:
		s.State = "down"
	}
	if v := cs.GetLastStatus(); v != "" {
		s.LastStatus = &v
	}
	if m.GetKind() == state.KindSSLCheck && cs.DaysLeft != nil {
		d := cs.GetDaysLeft()
		s.DaysLeft = &d
	}
	if sc, ok := state.LeaderSchedule(m); ok {
		next := sc.NextFor(m.GetUuid(), a.now())
		s.NextRunAt = optTime(next.UnixMilli())
	}
	out.Status = s
	return out
}
