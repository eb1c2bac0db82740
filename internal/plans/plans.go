// Package plans is an account's plan as the HTTP APIs show it: the JSON
// form shared by the operator API (control/admin) and the Management API's
// GET /api/v1/account (control/manage), so neither imports the other.
package plans

import raftv1 "lookout/internal/gen/lookout/raft/v1"

// Plan is an account's plan as the APIs show it. A nil limit is no limit
// (JSON null).
type Plan struct {
	Name                string  `json:"name"`
	MonitorLimit        *int64  `json:"monitor_limit"`
	MonthlyEventLimit   *int64  `json:"monthly_event_limit"`
	QuotaGraceSeconds   int64   `json:"quota_grace_seconds"`
	ConfigAsCode        bool    `json:"config_as_code"`
	IngestRatePerSecond float64 `json:"ingest_rate_per_second"`
	IngestBurst         int64   `json:"ingest_burst"`
	// MonitorsCreatedPerMinute caps the ping monitors that pings may
	// create in one minute (a storage guard; default 60).
	MonitorsCreatedPerMinute int64 `json:"monitors_created_per_minute"`
}

// DefaultMonitorsCreatedPerMinute is how many ping monitors pings of one
// account may create in one minute when the plan does not say
// (Plan.monitors_created_per_minute absent).
const DefaultMonitorsCreatedPerMinute = 60

// MonitorsCreatedPerMinute is the plan's cap on ping monitors created by
// pings in one minute (DefaultMonitorsCreatedPerMinute when it says none).
func MonitorsCreatedPerMinute(p *raftv1.Plan) int64 {
	if p == nil || p.MonitorsCreatedPerMinute == nil || p.GetMonitorsCreatedPerMinute() < 0 {
		return DefaultMonitorsCreatedPerMinute
	}
	return p.GetMonitorsCreatedPerMinute()
}

// FromProto is the JSON form of a stored plan.
func FromProto(p *raftv1.Plan) Plan {
	return Plan{
		Name:                p.GetName(),
		MonitorLimit:        p.MonitorLimit,
		MonthlyEventLimit:   p.MonthlyEventLimit,
		QuotaGraceSeconds:   p.GetQuotaGraceSeconds(),
		ConfigAsCode:        p.GetConfigAsCode(),
		IngestRatePerSecond: p.GetIngestRatePerSecond(),
		IngestBurst:         p.GetIngestBurst(),

		MonitorsCreatedPerMinute: MonitorsCreatedPerMinute(p),
	}
}
