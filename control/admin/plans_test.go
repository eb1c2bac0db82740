package admin_test

import (
	"net/http"
	"reflect"
	"testing"

	"lookout/control/controltest"
)

func TestSetPlan(t *testing.T) {
	srv := controltest.NewServer(t)
	created := mustCreateAccount(t, srv, "ops@example.com")
	r := do(t, srv, "PUT", "/admin/v1/accounts/"+created.ID+"/plan", `{
		"name": "team", "monitor_limit": 100, "monthly_event_limit": 0,
		"quota_grace_seconds": 0, "config_as_code": false,
		"ingest_rate_per_second": 2.5, "ingest_burst": 1}`)
	r.wantStatus(t, http.StatusOK)
	var got struct{ Plan map[string]any }
	r.decode(t, &got)
	want := map[string]any{
		"name": "team", "monitor_limit": 100.0, "monthly_event_limit": 0.0,
		"quota_grace_seconds": 0.0, "config_as_code": false,
		"ingest_rate_per_second": 2.5, "ingest_burst": 1.0, "monitors_created_per_minute": 60.0,
	}
	if !reflect.DeepEqual(got.Plan, want) {
		t.Errorf("plan %v, want %v", got.Plan, want)
	}
	acct, err := srv.Store.Account(created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p := acct.GetPlan(); p.GetName() != "team" || p.MonthlyEventLimit == nil || p.GetMonthlyEventLimit() != 0 || p.GetIngestRatePerSecond() != 2.5 {
		t.Errorf("stored plan %v", p)
	}

	// A partial plan takes the defaults for what it leaves out, null limits
	// included: PUT replaces the plan.
	r = do(t, srv, "PUT", "/admin/v1/accounts/"+created.ID+"/plan", `{"ingest_burst": 5, "monitor_limit": null}`)
	r.wantStatus(t, http.StatusOK)
	r.decode(t, &got)
	want = map[string]any{
		"name": "default", "monitor_limit": nil, "monthly_event_limit": nil,
		"quota_grace_seconds": 259200.0, "config_as_code": true,
		"ingest_rate_per_second": 10.0, "ingest_burst": 5.0, "monitors_created_per_minute": 60.0,
	}
	if !reflect.DeepEqual(got.Plan, want) {
		t.Errorf("plan %v, want %v", got.Plan, want)
	}
	r = do(t, srv, "GET", "/admin/v1/accounts/"+created.ID, "")
	var acctBody struct{ Plan map[string]any }
	r.decode(t, &acctBody)
	if !reflect.DeepEqual(acctBody.Plan, want) {
		t.Errorf("GET after PUT: plan %v, want %v", acctBody.Plan, want)
	}
}

func TestSetPlanInvalid(t *testing.T) {
	srv := controltest.NewServer(t)
	created := mustCreateAccount(t, srv, "ops@example.com")
	path := "/admin/v1/accounts/" + created.ID + "/plan"
	tests := []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"unknown field", `{"seats":1}`, 400, "invalid_request", "invalid field: seats"},
		{"empty name", `{"name":""}`, 400, "invalid_request", "invalid field: name"},
		{"blank name", `{"name":"   "}`, 400, "invalid_request", "invalid field: name"},
		{"name not string", `{"name":1}`, 400, "invalid_request", "invalid field: name"},
		{"negative monitor limit", `{"monitor_limit":-1}`, 400, "invalid_request", "invalid field: monitor_limit"},
		{"negative event limit", `{"monthly_event_limit":-1}`, 400, "invalid_request", "invalid field: monthly_event_limit"},
		{"huge limit", `{"monthly_event_limit":99999999999999999999}`, 400, "invalid_request", "invalid field: monthly_event_limit"},
		{"negative grace", `{"quota_grace_seconds":-1}`, 400, "invalid_request", "invalid field: quota_grace_seconds"},
		{"negative rate", `{"ingest_rate_per_second":-1}`, 400, "invalid_request", "invalid field: ingest_rate_per_second"},
		{"burst fraction", `{"ingest_burst":1.5}`, 400, "invalid_request", "invalid field: ingest_burst"},
		{"burst zero", `{"ingest_burst":0}`, 400, "invalid_request", "invalid field: ingest_burst"},
		{"tiny rate", `{"ingest_rate_per_second":1e-9}`, 400, "invalid_request", "invalid field: ingest_rate_per_second"},
		{"huge rate", `{"ingest_rate_per_second":1000001}`, 400, "invalid_request", "invalid field: ingest_rate_per_second"},
		{"huge burst", `{"ingest_burst":9223372036854775807}`, 400, "invalid_request", "invalid field: ingest_burst"},
		{"creations zero", `{"monitors_created_per_minute":0}`, 400, "invalid_request", "invalid field: monitors_created_per_minute"},
		{"creations huge", `{"monitors_created_per_minute":100001}`, 400, "invalid_request", "invalid field: monitors_created_per_minute"},
		{"null body", `null`, 400, "invalid_json", "invalid JSON"},
		{"syntax", `{"name":"x"`, 400, "invalid_json", "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do(t, srv, "PUT", path, tt.body).wantError(t, tt.status, tt.code, tt.msg)
		})
	}
	acct, err := srv.Store.Account(created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if acct.GetPlan().GetName() != "default" {
		t.Errorf("an invalid PUT changed the plan to %v", acct.GetPlan())
	}
}

func TestSetPlanUnknownAccount(t *testing.T) {
	srv := controltest.NewServer(t)
	do(t, srv, "PUT", "/admin/v1/accounts/nope/plan", `{}`).wantError(t, http.StatusNotFound, "not_found", "account nope not found")
}
