package admin

import (
	"context"
	"encoding/json"
	"math"
	"net/http"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/plans"
)

// The default plan: no limits, 3 days of quota grace, config as code on,
// 10 pings a second per ingest key with a burst of 20.
const (
	defaultPlanName          = "default"
	defaultQuotaGraceSeconds = 3 * 24 * 60 * 60
	defaultConfigAsCode      = true
	defaultIngestRate        = 10
	defaultIngestBurst       = 20
)

// Plan bounds.
const (
	maxPlanName = 64
	// maxQuotaGraceSeconds (a year) keeps grace * time.Second far from
	// overflowing a time.Duration.
	maxQuotaGraceSeconds = 365 * 24 * 60 * 60
	// minIngestRate (one ping in 1000 s) and maxIngestRate bound a key's
	// rate limit to something a token bucket can mean: below the minimum a
	// key would refill in days, above the maximum the limit is no limit.
	minIngestRate = 0.001
	maxIngestRate = 1_000_000
	// maxIngestBurst bounds the bucket.
	maxIngestBurst = 1_000_000
)

// Plan is an account's plan as the API shows it (internal/plans, shared
// with the Management API). A nil limit is no limit (JSON null).
type Plan plans.Plan

// PlanRequest is a plan as sent: a field that is absent (nil, JSON null or
// missing) takes its default. For the two limits the default is "no limit",
// so null and absent mean the same.
type PlanRequest struct {
	Name                *string  `json:"name,omitempty"`
	MonitorLimit        *int64   `json:"monitor_limit,omitempty"`
	MonthlyEventLimit   *int64   `json:"monthly_event_limit,omitempty"`
	QuotaGraceSeconds   *int64   `json:"quota_grace_seconds,omitempty"`
	ConfigAsCode        *bool    `json:"config_as_code,omitempty"`
	IngestRatePerSecond *float64 `json:"ingest_rate_per_second,omitempty"`
	IngestBurst         *int64   `json:"ingest_burst,omitempty"`
	// MonitorsCreatedPerMinute is 1 to state.MaxMonitorsCreatedPerMinute.
	MonitorsCreatedPerMinute *int64 `json:"monitors_created_per_minute,omitempty"`
}

// resolve fills in the defaults and validates; path names the plan in
// error messages ("plan" inside an account, "" when it is the body).
func (p *PlanRequest) resolve(path string) (Plan, error) {
	plan := Plan{
		Name:                defaultPlanName,
		QuotaGraceSeconds:   defaultQuotaGraceSeconds,
		ConfigAsCode:        defaultConfigAsCode,
		IngestRatePerSecond: defaultIngestRate,
		IngestBurst:         defaultIngestBurst,

		MonitorsCreatedPerMinute: state.DefaultMonitorsCreatedPerMinute,
	}
	if p == nil {
		return plan, nil
	}
	if p.Name != nil {
		if err := checkName(joinPath(path, "name"), *p.Name, maxPlanName); err != nil {
			return Plan{}, err
		}
		plan.Name = *p.Name
	}
	if p.MonitorLimit != nil && *p.MonitorLimit < 0 {
		return Plan{}, invalidField(joinPath(path, "monitor_limit"), "must be null or at least 0")
	}
	plan.MonitorLimit = p.MonitorLimit
	if p.MonthlyEventLimit != nil && *p.MonthlyEventLimit < 0 {
		return Plan{}, invalidField(joinPath(path, "monthly_event_limit"), "must be null or at least 0")
	}
	plan.MonthlyEventLimit = p.MonthlyEventLimit
	if p.QuotaGraceSeconds != nil {
		if g := *p.QuotaGraceSeconds; g < 0 || g > maxQuotaGraceSeconds {
			return Plan{}, invalidField(joinPath(path, "quota_grace_seconds"), "must be 0 to 31536000")
		}
		plan.QuotaGraceSeconds = *p.QuotaGraceSeconds
	}
	if p.ConfigAsCode != nil {
		plan.ConfigAsCode = *p.ConfigAsCode
	}
	if p.IngestRatePerSecond != nil {
		if r := *p.IngestRatePerSecond; !(r >= minIngestRate && r <= maxIngestRate) || math.IsNaN(r) {
			return Plan{}, invalidField(joinPath(path, "ingest_rate_per_second"), "must be 0.001 to 1000000")
		}
		plan.IngestRatePerSecond = *p.IngestRatePerSecond
	}
	if p.IngestBurst != nil {
		if b := *p.IngestBurst; b < 1 || b > maxIngestBurst {
			return Plan{}, invalidField(joinPath(path, "ingest_burst"), "must be 1 to 1000000")
		}
		plan.IngestBurst = *p.IngestBurst
	}
	if p.MonitorsCreatedPerMinute != nil {
		if n := *p.MonitorsCreatedPerMinute; n < 1 || n > state.MaxMonitorsCreatedPerMinute {
			return Plan{}, invalidField(joinPath(path, "monitors_created_per_minute"), "must be 1 to 100000")
		}
		plan.MonitorsCreatedPerMinute = *p.MonitorsCreatedPerMinute
	}
	return plan, nil
}

// decodePlan decodes a plan object sent at path (null or empty: nil).
func decodePlan(data json.RawMessage, path string) (*PlanRequest, error) {
	if len(data) == 0 || string(data) == "null" {
		return nil, nil
	}
	var p PlanRequest
	if err := decodeObject(data, &p, path); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p Plan) proto() *raftv1.Plan {
	return &raftv1.Plan{
		Name:                p.Name,
		MonitorLimit:        p.MonitorLimit,
		MonthlyEventLimit:   p.MonthlyEventLimit,
		QuotaGraceSeconds:   p.QuotaGraceSeconds,
		ConfigAsCode:        p.ConfigAsCode,
		IngestRatePerSecond: p.IngestRatePerSecond,
		IngestBurst:         p.IngestBurst,

		MonitorsCreatedPerMinute: &p.MonitorsCreatedPerMinute,
	}
}

// PlanFromProto is the JSON form of a stored plan.
func PlanFromProto(p *raftv1.Plan) Plan { return Plan(plans.FromProto(p)) }

// setPlanResponse is the answer to PUT /admin/v1/accounts/{id}/plan.
type setPlanResponse struct {
	Plan Plan `json:"plan"`
}

// handleSetPlan serves PUT /admin/v1/accounts/{id}/plan: the body is a plan
// object that replaces the account's plan (missing fields take defaults).
func (a *API) handleSetPlan(w http.ResponseWriter, r *http.Request) {
	var req PlanRequest
	if err := decodeBody(w, r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	plan, err := a.setPlan(r.Context(), r.PathValue("id"), &req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, setPlanResponse{Plan: plan})
}

func (a *API) setPlan(ctx context.Context, accountID string, req *PlanRequest) (Plan, error) {
	plan, err := req.resolve("")
	if err != nil {
		return Plan{}, err
	}
	err = a.apply(ctx, &raftv1.Command{Op: &raftv1.Command_SetPlan{SetPlan: &raftv1.SetPlan{
		AccountId: accountID,
		Plan:      plan.proto(),
	}}})
	if err != nil {
		return Plan{}, err
	}
	return plan, nil
}
