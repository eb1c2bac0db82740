package admin_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"lookout/cluster"
	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestCreateAccount(t *testing.T) {
	srv := controltest.NewServer(t)
	r := do(t, srv, "POST", "/admin/v1/accounts", `{"email":"ops@example.com","password":"correct horse"}`)
	r.wantStatus(t, http.StatusCreated)
	var got createdAccount
	r.decode(t, &got)

	wantPlan := map[string]any{
		"name": "default", "monitor_limit": nil, "monthly_event_limit": nil,
		"quota_grace_seconds": 259200.0, "config_as_code": true,
		"ingest_rate_per_second": 10.0, "ingest_burst": 20.0, "monitors_created_per_minute": 60.0,
	}
	if got.Email != "ops@example.com" || !reflect.DeepEqual(got.Plan, wantPlan) {
		t.Errorf("got %+v, want the e-mail and plan %v", got, wantPlan)
	}
	if !strings.HasPrefix(got.IngestKey, apikey.Ingest) || !strings.HasPrefix(got.ManagementKey, apikey.Management) {
		t.Errorf("keys %q, %q lack their prefixes", got.IngestKey, got.ManagementKey)
	}

	owner, err := srv.Store.UserByEmail("ops@example.com")
	if err != nil || owner.GetAccountId() != got.ID || owner.GetRole() != "owner" {
		t.Fatalf("the account's first owner: %v %v", owner, err)
	}
	if err := bcrypt.CompareHashAndPassword(owner.GetPasswordHash(), []byte("correct horse")); err != nil {
		t.Errorf("stored password hash: %v", err)
	}
	ingest, err := srv.Store.KeyByHash(apikey.Hash(got.IngestKey))
	if err != nil {
		t.Fatal(err)
	}
	if ingest.GetType() != raftv1.KeyType_KEY_TYPE_INGEST || ingest.GetName() != "default" || ingest.GetAccountId() != got.ID {
		t.Errorf("ingest key %v", ingest)
	}
	mgmt, err := srv.Store.KeyByHash(apikey.Hash(got.ManagementKey))
	if err != nil {
		t.Fatal(err)
	}
	if mgmt.GetType() != raftv1.KeyType_KEY_TYPE_MANAGEMENT || mgmt.GetName() != "personal" ||
		!reflect.DeepEqual(mgmt.GetScopes(), []string{"read", "write", "delete"}) {
		t.Errorf("management key %v", mgmt)
	}
}

func TestCreateAccountWithoutPassword(t *testing.T) {
	srv := controltest.NewServer(t)
	got := mustCreateAccount(t, srv, "nopass@example.com")
	owner, err := srv.Store.User(got.ID, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(owner.GetPasswordHash()) != 0 {
		t.Errorf("password hash %q stored for an account without a password", owner.GetPasswordHash())
	}
}

func TestCreateAccountPartialPlan(t *testing.T) {
	srv := controltest.NewServer(t)
	r := do(t, srv, "POST", "/admin/v1/accounts",
		`{"email":"a@example.com","plan":{"name":"pro","monitor_limit":50,"config_as_code":false}}`)
	r.wantStatus(t, http.StatusCreated)
	var got createdAccount
	r.decode(t, &got)
	want := map[string]any{
		"name": "pro", "monitor_limit": 50.0, "monthly_event_limit": nil,
		"quota_grace_seconds": 259200.0, "config_as_code": false,
		"ingest_rate_per_second": 10.0, "ingest_burst": 20.0, "monitors_created_per_minute": 60.0,
	}
	if !reflect.DeepEqual(got.Plan, want) {
		t.Errorf("plan %v, want %v", got.Plan, want)
	}
	acct, err := srv.Store.Account(got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p := acct.GetPlan(); p.GetName() != "pro" || p.GetMonitorLimit() != 50 || p.MonthlyEventLimit != nil || p.GetConfigAsCode() {
		t.Errorf("stored plan %v", p)
	}
}

func TestCreateAccountInvalid(t *testing.T) {
	tests := []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"no email", `{}`, 400, "invalid_request", "invalid field: email"},
		{"empty email", `{"email":""}`, 400, "invalid_request", "invalid field: email"},
		{"bad email", `{"email":"not-an-address"}`, 400, "invalid_request", "invalid field: email"},
		{"display name", `{"email":"Ops <ops@example.com>"}`, 400, "invalid_request", "invalid field: email"},
		{"angle brackets", `{"email":"<ops@example.com>"}`, 400, "invalid_request", "invalid field: email"},
		{"spaces", `{"email":" ops@example.com"}`, 400, "invalid_request", "invalid field: email"},
		{"email not string", `{"email":5}`, 400, "invalid_request", "invalid field: email"},
		{"short password", `{"email":"a@example.com","password":"1234567"}`, 400, "invalid_request", "invalid field: password"},
		{"empty password", `{"email":"a@example.com","password":""}`, 400, "invalid_request", "invalid field: password"},
		{"long password", `{"email":"a@example.com","password":"` + strings.Repeat("x", 73) + `"}`, 400, "invalid_request", "invalid field: password"},
		{"unknown field", `{"email":"a@example.com","role":"admin"}`, 400, "invalid_request", "invalid field: role"},
		{"plan not object", `{"email":"a@example.com","plan":[]}`, 400, "invalid_request", "invalid field: plan"},
		{"plan unknown field", `{"email":"a@example.com","plan":{"seats":3}}`, 400, "invalid_request", "invalid field: plan.seats"},
		{"plan empty name", `{"email":"a@example.com","plan":{"name":""}}`, 400, "invalid_request", "invalid field: plan.name"},
		{"plan long name", `{"email":"a@example.com","plan":{"name":"` + strings.Repeat("n", 65) + `"}}`, 400, "invalid_request", "invalid field: plan.name"},
		{"negative monitor limit", `{"email":"a@example.com","plan":{"monitor_limit":-1}}`, 400, "invalid_request", "invalid field: plan.monitor_limit"},
		{"fractional monitor limit", `{"email":"a@example.com","plan":{"monitor_limit":1.5}}`, 400, "invalid_request", "invalid field: plan.monitor_limit"},
		{"negative event limit", `{"email":"a@example.com","plan":{"monthly_event_limit":-5}}`, 400, "invalid_request", "invalid field: plan.monthly_event_limit"},
		{"string event limit", `{"email":"a@example.com","plan":{"monthly_event_limit":"10"}}`, 400, "invalid_request", "invalid field: plan.monthly_event_limit"},
		{"negative grace", `{"email":"a@example.com","plan":{"quota_grace_seconds":-1}}`, 400, "invalid_request", "invalid field: plan.quota_grace_seconds"},
		{"huge grace", `{"email":"a@example.com","plan":{"quota_grace_seconds":31536001}}`, 400, "invalid_request", "invalid field: plan.quota_grace_seconds"},
		{"config as code string", `{"email":"a@example.com","plan":{"config_as_code":"yes"}}`, 400, "invalid_request", "invalid field: plan.config_as_code"},
		{"zero rate", `{"email":"a@example.com","plan":{"ingest_rate_per_second":0}}`, 400, "invalid_request", "invalid field: plan.ingest_rate_per_second"},
		{"zero burst", `{"email":"a@example.com","plan":{"ingest_burst":0}}`, 400, "invalid_request", "invalid field: plan.ingest_burst"},
		{"syntax error", `{"email":`, 400, "invalid_json", "invalid JSON"},
		{"not an object", `["a@example.com"]`, 400, "invalid_json", "invalid JSON"},
		{"empty body", ``, 400, "invalid_json", "invalid JSON"},
		{"trailing data", `{"email":"a@example.com"} {}`, 400, "invalid_json", "invalid JSON"},
	}
	srv := controltest.NewServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			do(t, srv, "POST", "/admin/v1/accounts", tt.body).wantError(t, tt.status, tt.code, tt.msg)
		})
	}
	accounts, err := srv.Store.Accounts()
	if err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 0 {
		t.Errorf("invalid requests created %d accounts", len(accounts))
	}
}

func TestCreateAccountTooLarge(t *testing.T) {
	srv := controltest.NewServer(t)
	body := `{"email":"a@example.com","password":"` + strings.Repeat("x", 1<<20) + `"}`
	do(t, srv, "POST", "/admin/v1/accounts", body).wantError(t, http.StatusRequestEntityTooLarge, "request_too_large", "")
}

func TestCreateAccountEmailTaken(t *testing.T) {
	srv := controltest.NewServer(t)
	mustCreateAccount(t, srv, "ops@example.com")
	do(t, srv, "POST", "/admin/v1/accounts", `{"email":"OPS@example.com"}`).
		wantError(t, http.StatusConflict, "conflict", "an account with e-mail")
}

func TestGetAccount(t *testing.T) {
	srv := controltest.NewServer(t)
	created := mustCreateAccount(t, srv, "ops@example.com")

	reads := srv.Cluster.Reads()
	r := do(t, srv, "GET", "/admin/v1/accounts/"+created.ID, "")
	r.wantStatus(t, http.StatusOK)
	if srv.Cluster.Reads() != reads+1 {
		t.Errorf("GET made %d consistent reads, want 1", srv.Cluster.Reads()-reads)
	}
	var got struct {
		ID, Email string
		Plan      map[string]any
		Usage     map[string]any
		CreatedAt string `json:"created_at"`
	}
	r.decode(t, &got)
	wantUsage := map[string]any{"monitors": 0.0, "events_this_period": 0.0, "period_resets_at": "2026-04-01T00:00:00Z"}
	if got.ID != created.ID || got.Email != "ops@example.com" || !reflect.DeepEqual(got.Plan, created.Plan) ||
		!reflect.DeepEqual(got.Usage, wantUsage) || got.CreatedAt != "2026-03-15T12:30:00Z" {
		t.Errorf("got %+v", got)
	}
}

func TestGetAccountStale(t *testing.T) {
	srv := controltest.NewServer(t)
	created := mustCreateAccount(t, srv, "ops@example.com")
	srv.Cluster.FailReads(noLeader())
	reads := srv.Cluster.Reads()

	// A stale read answers from the local copy without asking the cluster.
	r := do(t, srv, "GET", "/admin/v1/accounts/"+created.ID+"?stale=true", "")
	r.wantStatus(t, http.StatusOK)
	if srv.Cluster.Reads() != reads {
		t.Error("a stale read made a consistent read")
	}
	// Without it, no leader means 503.
	r = do(t, srv, "GET", "/admin/v1/accounts/"+created.ID, "")
	r.wantError(t, http.StatusServiceUnavailable, "unavailable", "")
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q, want 1", r.header.Get("Retry-After"))
	}
	// stale=false is a consistent read.
	do(t, srv, "GET", "/admin/v1/accounts/"+created.ID+"?stale=false", "").wantStatus(t, http.StatusServiceUnavailable)
	do(t, srv, "GET", "/admin/v1/accounts/"+created.ID+"?stale=maybe", "").
		wantError(t, http.StatusBadRequest, "invalid_request", "invalid field: stale")
}

func TestGetAccountNotFound(t *testing.T) {
	srv := controltest.NewServer(t)
	do(t, srv, "GET", "/admin/v1/accounts/00000000-0000-0000-0000-000000000000", "").
		wantError(t, http.StatusNotFound, "not_found", "account ")
}

// The account's hashes are never in an answer.
func TestNoSecretsInGetAccount(t *testing.T) {
	srv := controltest.NewServer(t)
	created := mustCreateAccount(t, srv, "ops@example.com")
	r := do(t, srv, "GET", "/admin/v1/accounts/"+created.ID, "")
	if bytes.Contains(r.body, []byte("password")) || bytes.Contains(r.body, []byte("key")) {
		t.Errorf("GET account shows secrets: %s", r.body)
	}
}

// CreateAccount is what the dev-mode start-up calls.
func TestCreateAccountFromGo(t *testing.T) {
	srv := controltest.NewServer(t)
	name := "demo"
	created, err := srv.API.CreateAccount(context.Background(), admin.AccountRequest{
		Email: "demo@example.com", Password: "demo-password", Plan: &admin.PlanRequest{Name: &name},
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Plan.Name != "demo" || created.Plan.IngestBurst != 20 || created.Plan.MonitorLimit != nil {
		t.Errorf("plan %+v", created.Plan)
	}
	if _, err := srv.Store.KeyByHash(apikey.Hash(created.IngestKey)); err != nil {
		t.Errorf("ingest key: %v", err)
	}

	_, err = srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "demo@example.com"})
	var e *admin.Error
	if !errors.As(err, &e) || e.Status != http.StatusConflict {
		t.Errorf("second account with the e-mail: %v, want a 409 *admin.Error", err)
	}
	_, err = srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "x"})
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code != "invalid_request" {
		t.Errorf("bad e-mail: %v, want a 400 *admin.Error", err)
	}
	srv.Cluster.FailApply(noLeader())
	_, err = srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "y@example.com"})
	if !errors.Is(err, cluster.ErrNoLeader) {
		t.Errorf("without a leader: %v, want an error wrapping cluster.ErrNoLeader", err)
	}
}

func TestSetPassword(t *testing.T) {
	srv := controltest.NewServer(t)
	r := do(t, srv, "POST", "/admin/v1/accounts", `{"email":"pw@example.com"}`)
	r.wantStatus(t, http.StatusCreated)
	var created struct{ ID string }
	r.decode(t, &created)

	do(t, srv, "PUT", "/admin/v1/accounts/"+created.ID+"/password", `{"password":"new password"}`).wantStatus(t, http.StatusNoContent)
	owner, err := srv.Store.User(created.ID, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := bcrypt.CompareHashAndPassword(owner.GetPasswordHash(), []byte("new password")); err != nil {
		t.Fatalf("stored hash: %v", err)
	}
	do(t, srv, "PUT", "/admin/v1/accounts/"+created.ID+"/password", `{"password":"short"}`).wantError(t, 400, "invalid_request", "invalid field: password")
	do(t, srv, "PUT", "/admin/v1/accounts/"+created.ID+"/password", `{}`).wantError(t, 400, "invalid_request", "invalid field: password")
	do(t, srv, "PUT", "/admin/v1/accounts/nobody/password", `{"password":"new password"}`).wantStatus(t, http.StatusNotFound)
	do(t, srv, "PUT", "/admin/v1/accounts/"+created.ID+"/password", `{"password":""}`).wantStatus(t, http.StatusNoContent)
	if owner, _ := srv.Store.User(created.ID, created.ID); len(owner.GetPasswordHash()) != 0 {
		t.Fatal("password not removed")
	}
}
