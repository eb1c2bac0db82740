package manage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/manage"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// api is the Management API over a real state store, with one account.
type api struct {
	t    *testing.T
	srv  *controltest.Server
	url  string
	acct *admin.AccountCreated
}

func newAPI(t *testing.T) *api {
	t.Helper()
	srv := controltest.NewServer(t)
	acct, err := srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	srv.MarkKeyUsed(t, acct.ManagementKey) // so that requests write only what they are for
	mux := http.NewServeMux()
	manage.New(manage.Options{Cluster: srv.Cluster, State: srv.Store, Now: func() time.Time { return srv.Now }}).Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return &api{t: t, srv: srv, url: hs.URL, acct: acct}
}

// do sends a request with the account's key and decodes the JSON answer.
func (a *api) do(method, path string, body any) (int, map[string]any, http.Header) {
	return a.doKey(method, path, a.acct.ManagementKey, body)
}

func (a *api) doKey(method, path, key string, body any) (int, map[string]any, http.Header) {
	a.t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, a.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}

func ping(name string, extra map[string]any) map[string]any {
	m := map[string]any{"manifest_version": 1, "kind": "ping", "name": name, "enabled": true, "timeout_seconds": 600}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func httpCheck(name, url string) map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "http_check", "name": name, "enabled": true, "schedule": "5m",
		"config": map[string]any{"url": url, "method": "GET", "timeout": 10, "expected_status": 200}}
}

// codes returns the error codes of a 422 body at key.
func codes(body map[string]any, key string) []string {
	var out []string
	ec, _ := body["error_codes"].(map[string]any)
	list, _ := ec[key].([]any)
	for _, c := range list {
		out = append(out, c.(string))
	}
	return out
}

func TestCreateGetListAndRules(t *testing.T) {
	a := newAPI(t)
	status, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"uuid": "ignored", "display_name": "Backup", "project": "ops"}))
	if status != 201 || m["uuid"] == "ignored" || m["uuid"] == "" || m["display_name"] != "Backup" || m["project"] != "ops" {
		t.Fatalf("create: %d %v", status, m)
	}
	id := m["uuid"].(string)
	if status, got, _ := a.do("GET", "/api/v1/monitors/"+id, nil); status != 200 || got["name"] != "backup" || got["timeout_seconds"] != 600.0 {
		t.Fatalf("get: %d %v", status, got)
	}
	// Rule 1: a duplicate name is 422; a check may share a ping's name.
	if status, body, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil)); status != 422 || strings.Join(codes(body, "manifest"), ",") != "name_already_exists" {
		t.Fatalf("duplicate: %d %v", status, body)
	}
	if status, body, _ := a.do("POST", "/api/v1/monitors", httpCheck("backup", "https://example.com/health")); status != 201 {
		t.Fatalf("check named like a ping: %d %v", status, body)
	}
	ssl := map[string]any{"manifest_version": 1, "kind": "ssl_check", "name": "backup", "schedule": "1h", "config": map[string]any{"domain": "example.com"}}
	if status, body, _ := a.do("POST", "/api/v1/monitors", ssl); status != 422 || strings.Join(codes(body, "manifest"), ",") != "name_taken_by_other_kind" {
		t.Fatalf("ssl_check named like an http_check: %d %v", status, body)
	}
	// Every problem of a manifest at once.
	status, body, _ := a.do("POST", "/api/v1/monitors", map[string]any{"manifest_version": 1, "kind": "ping", "name": "bad name!", "timeout_seconds": 0, "grace_seconds": -1})
	if status != 422 || strings.Join(codes(body, "manifest"), ",") != "name_charset_invalid,timeout_out_of_range,grace_out_of_range" || body["message"] == "" {
		t.Fatalf("invalid: %d %v", status, body)
	}
	if status, body, _ := a.do("POST", "/api/v1/monitors", "{not json"); status != 422 || codes(body, "manifest")[0] != "invalid_json" {
		t.Fatalf("invalid JSON: %d %v", status, body)
	}
	// List, filter, page.
	for _, n := range []string{"a1", "a2", "a3"} {
		if status, _, _ := a.do("POST", "/api/v1/monitors", ping(n, nil)); status != 201 {
			t.Fatal(status)
		}
	}
	if status, body, _ := a.do("GET", "/api/v1/monitors", nil); status != 200 || len(body["monitors"].([]any)) != 5 || body["next_cursor"] != nil {
		t.Fatalf("list: %d %v", status, body)
	}
	if status, body, _ := a.do("GET", "/api/v1/monitors?kind=http_check", nil); status != 200 || len(body["monitors"].([]any)) != 1 {
		t.Fatalf("kind filter: %d %v", status, body)
	}
	var names []string
	path := "/api/v1/monitors?kind=ping&limit=3"
	for page := 0; page < 3; page++ {
		status, body, _ := a.do("GET", path, nil)
		if status != 200 {
			t.Fatalf("page %d: %d %v", page, status, body)
		}
		for _, m := range body["monitors"].([]any) {
			names = append(names, m.(map[string]any)["name"].(string))
		}
		next, more := body["next_cursor"].(string)
		if !more {
			break
		}
		path = "/api/v1/monitors?kind=ping&limit=3&cursor=" + next
	}
	if strings.Join(names, ",") != "a1,a2,a3,backup" {
		t.Fatalf("pages gave %v", names)
	}
	for _, bad := range []string{"?kind=cron", "?limit=0", "?limit=1001", "?cursor=zz"} {
		if status, _, _ := a.do("GET", "/api/v1/monitors"+bad, nil); status != 400 {
			t.Fatalf("%s: %d", bad, status)
		}
	}
}

func TestPlanLimit(t *testing.T) {
	a := newAPI(t)
	limit := int64(1)
	if _, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_SetPlan{SetPlan: &raftv1.SetPlan{
		AccountId: a.acct.ID, Plan: &raftv1.Plan{Name: "tiny", MonitorLimit: &limit, ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20},
	}}}); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := a.do("POST", "/api/v1/monitors", ping("one", nil)); status != 201 {
		t.Fatal(status)
	}
	if status, body, _ := a.do("POST", "/api/v1/monitors", ping("two", nil)); status != 422 || codes(body, "manifest")[0] != "plan_limit_reached" {
		t.Fatalf("over the limit: %d %v", status, body)
	}
}

func TestReplaceAndDelete(t *testing.T) {
	a := newAPI(t)
	if _, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateNotificationGroup{CreateNotificationGroup: &raftv1.CreateNotificationGroup{
		AccountId: a.acct.ID, GroupId: "g1", Name: "oncall", ChannelsJson: []byte("[]"),
	}}}); err != nil {
		t.Fatal(err)
	}
	_, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"display_name": "Backup", "project": "ops", "notification_group": "oncall"}))
	id := m["uuid"].(string)
	// PUT replaces wholesale: display_name cleared, group detached, project kept.
	status, got, _ := a.do("PUT", "/api/v1/monitors/"+id, ping("backup", map[string]any{"timeout_seconds": 60}))
	if status != 200 || got["display_name"] != nil || got["notification_group"] != nil || got["project"] != "ops" || got["timeout_seconds"] != 60.0 || got["uuid"] != id {
		t.Fatalf("replace: %d %v", status, got)
	}
	if status, body, _ := a.do("PUT", "/api/v1/monitors/"+id, ping("renamed", nil)); status != 422 || codes(body, "manifest")[0] != "name_immutable" {
		t.Fatalf("rename ping: %d %v", status, body)
	}
	if status, body, _ := a.do("PUT", "/api/v1/monitors/"+id, httpCheck("backup", "https://example.com")); status != 422 || codes(body, "manifest")[0] != "kind_mismatch" {
		t.Fatalf("kind change: %d %v", status, body)
	}
	if status, body, _ := a.do("PUT", "/api/v1/monitors/"+id, ping("backup", map[string]any{"notification_group": "nope"})); status != 422 || codes(body, "manifest")[0] != "notification_group_invalid" {
		t.Fatalf("unknown group: %d %v", status, body)
	}
	// Rule 3: a bare DELETE is 403 and deletes nothing.
	status, body, _ := a.do("DELETE", "/api/v1/monitors/"+id, nil)
	if status != 403 || body["code"] != "delete_requires_confirm" || !strings.HasSuffix(body["panel_url"].(string), "/monitors/"+id) {
		t.Fatalf("bare delete: %d %v", status, body)
	}
	if status, _, _ := a.do("GET", "/api/v1/monitors/"+id, nil); status != 200 {
		t.Fatal("a bare DELETE deleted")
	}
	if status, _, _ := a.do("DELETE", "/api/v1/monitors/"+id+"?confirm=true", nil); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if status, _, _ := a.do("GET", "/api/v1/monitors/"+id, nil); status != 404 {
		t.Fatalf("after delete: %d", status)
	}
	if status, _, _ := a.do("DELETE", "/api/v1/monitors/"+id+"?confirm=true", nil); status != 404 {
		t.Fatalf("second delete: %d", status)
	}
	// The name is released.
	if status, _, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil)); status != 201 {
		t.Fatalf("name not released: %d", status)
	}
}

func TestOtherAccountsAndScopes(t *testing.T) {
	a := newAPI(t)
	_, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil))
	id := m["uuid"].(string)
	other, err := a.srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "other@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range [][2]string{{"GET", ""}, {"PUT", ""}, {"DELETE", "?confirm=true"}, {"GET", "/events"}, {"GET", "/executions"}} {
		status, body, _ := a.doKey(req[0], "/api/v1/monitors/"+id+req[1], other.ManagementKey, ping("backup", nil))
		if status != 404 || body["code"] != "not_found" {
			t.Fatalf("%s %s with another account's key: %d %v", req[0], req[1], status, body)
		}
	}
	readOnly := createKey(t, a.srv, a.acct.ID, "read")
	if status, _, _ := a.doKey("GET", "/api/v1/monitors", readOnly, nil); status != 200 {
		t.Fatal(status)
	}
	for _, req := range [][3]string{{"POST", "/api/v1/monitors", "write"}, {"POST", "/api/v1/monitors/apply", "write"}, {"PUT", "/api/v1/monitors/" + id, "write"}, {"DELETE", "/api/v1/monitors/" + id + "?confirm=true", "delete"}} {
		status, body, _ := a.doKey(req[0], req[1], readOnly, ping("x", nil))
		if status != 403 || body["error_code"] != "insufficient_scope" || !strings.Contains(body["message"].(string), req[2]) {
			t.Fatalf("%s %s with a read key: %d %v", req[0], req[1], status, body)
		}
	}
}

func TestAccountAndRateLimitHeaders(t *testing.T) {
	a := newAPI(t)
	a.do("POST", "/api/v1/monitors", ping("backup", nil))
	status, body, h := a.do("GET", "/api/v1/account", nil)
	usage, _ := body["usage"].(map[string]any)
	if status != 200 || body["email"] != "owner@example.com" || body["quota_state"] != "ok" || usage["monitors"] != 1.0 || usage["period_resets_at"] != "2026-04-01T00:00:00Z" {
		t.Fatalf("account: %d %v", status, body)
	}
	if h.Get("X-RateLimit-Limit") != "60" || h.Get("X-RateLimit-Remaining") != "58" || h.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("headers: %v", h)
	}
	for i := 0; i < 58; i++ {
		a.do("GET", "/api/v1/account", nil)
	}
	status, body, h = a.do("GET", "/api/v1/account", nil)
	if status != 429 || body["code"] != "rate_limited" || h.Get("Retry-After") == "" || h.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("61st request: %d %v %v", status, body, h)
	}
	// Without a valid key: limited per address, headers too.
	status, body, h = a.doKey("GET", "/api/v1/account", "mk_wrong", nil)
	if status != 401 || body["code"] != "unauthenticated" || h.Get("X-RateLimit-Limit") != "60" {
		t.Fatalf("bad key: %d %v %v", status, body, h)
	}
}

// createKey adds a named management key with scopes and returns its secret.
func createKey(t *testing.T, srv *controltest.Server, accountID string, scopes ...string) string {
	t.Helper()
	secret, hash, _ := apikey.New(apikey.Management)
	res, err := srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{Key: &raftv1.Key{
		Id: uuid.NewString(), AccountId: accountID, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "named", Scopes: scopes, Hash: hash,
	}}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create key: %v %v", res, err)
	}
	return secret
}

func TestStatusIsReadOnly(t *testing.T) {
	a := newAPI(t)
	_, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", map[string]any{"expected_interval_seconds": 3600, "grace_seconds": 60}))
	id := m["uuid"].(string)
	at := a.srv.Now.UnixMilli()
	if _, err := a.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{
		{AccountId: a.acct.ID, Monitor: "backup", EventType: "ping", Status: "run", ReceivedUnixMs: at},
		{AccountId: a.acct.ID, Monitor: "backup", EventType: "ping", Status: "complete", ReceivedUnixMs: at + 4000},
	}}}}); err != nil {
		t.Fatal(err)
	}
	status, got, _ := a.do("GET", "/api/v1/monitors/"+id, nil)
	st, _ := got["status"].(map[string]any)
	if status != 200 || st["state"] != "up" || st["last_duration"] != 4.0 || st["last_ping_at"] != "2026-03-15T12:30:04Z" || st["next_deadline_at"] != "2026-03-15T13:31:04Z" {
		t.Fatalf("status: %d %v", status, got)
	}
	// Sent back as read, status is ignored; export and apply leave it out.
	got["timeout_seconds"] = 60.0
	if status, body, _ := a.do("PUT", "/api/v1/monitors/"+id, got); status != 200 || body["status"] != nil {
		t.Fatalf("PUT with status: %d %v", status, body)
	}
	if _, export, _ := a.do("GET", "/api/v1/monitors/export", nil); strings.Contains(toJSON(export), "status") {
		t.Fatalf("export has a status: %v", export)
	}
}

// Only exactly one confirm=true deletes: a repeated or conflicting confirm
// is not a confirmation.
func TestDeleteNeedsExactlyOneConfirm(t *testing.T) {
	a := newAPI(t)
	_, m, _ := a.do("POST", "/api/v1/monitors", ping("backup", nil))
	id := m["uuid"].(string)
	for _, q := range []string{"confirm=true&confirm=false", "confirm=false&confirm=true", "confirm=true&confirm=true", "confirm=TRUE", "confirm="} {
		status, body, _ := a.do("DELETE", "/api/v1/monitors/"+id+"?"+q, nil)
		if status != 403 || body["code"] != "delete_requires_confirm" {
			t.Fatalf("DELETE ?%s: %d %v, want 403 delete_requires_confirm", q, status, body)
		}
		if status, _, _ := a.do("GET", "/api/v1/monitors/"+id, nil); status != 200 {
			t.Fatalf("DELETE ?%s deleted the monitor", q)
		}
	}
	if status, _, _ := a.do("DELETE", "/api/v1/monitors/"+id+"?confirm=true", nil); status != 204 {
		t.Fatalf("delete: %d", status)
	}
}
