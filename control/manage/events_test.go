package manage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/cluster"
	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/manage"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

type fixture struct {
	srv     *controltest.Server
	url     string
	acct    *admin.AccountCreated
	monitor string // uuid of the "backup" monitor
}

// newFixture runs the Management API over a real state with one account
// whose "backup" monitor has a run and a complete (series s1) and a fail.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := controltest.NewServer(t)
	ctx := context.Background()
	acct, err := srv.API.CreateAccount(ctx, admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	at := srv.Now.UnixMilli()
	ev := func(status string, ms int64, extra func(*raftv1.Event)) *raftv1.Event {
		e := &raftv1.Event{AccountId: acct.ID, Monitor: "backup", EventType: "ping", Status: status, ReceivedUnixMs: ms}
		if extra != nil {
			extra(e)
		}
		return e
	}
	res, err := srv.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: []*raftv1.Event{
		ev("run", at, func(e *raftv1.Event) { e.Series = "s1" }),
		ev("complete", at+1500, func(e *raftv1.Event) { e.Series, e.Host, e.ExitCode = "s1", "db1", proto.Int64(0) }),
		ev("fail", at+3000, func(e *raftv1.Event) { e.Message = "disk full" }),
	}}}})
	if err != nil || res.GetEvents()[0].GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_STORED {
		t.Fatalf("ingest: %v %v", res, err)
	}
	mux := http.NewServeMux()
	manage.New(manage.Options{Cluster: srv.Cluster, State: srv.Store}).Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return &fixture{srv: srv, url: hs.URL, acct: acct, monitor: res.GetEvents()[0].GetMonitorUuid()}
}

func (f *fixture) get(t *testing.T, path, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.url+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// namedKey adds a management key with scopes and returns its secret.
func (f *fixture) namedKey(t *testing.T, scopes ...string) string {
	t.Helper()
	secret, hash, _ := apikey.New(apikey.Management)
	res, err := f.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{Key: &raftv1.Key{
		Id: uuid.NewString(), AccountId: f.acct.ID, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "ci", Scopes: scopes, Hash: hash,
	}}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create key: %v %v", res, err)
	}
	return secret
}

func TestEventsNewestFirst(t *testing.T) {
	f := newFixture(t)
	status, body := f.get(t, "/api/v1/monitors/"+f.monitor+"/events", f.acct.ManagementKey)
	if status != http.StatusOK {
		t.Fatalf("status %d %v", status, body)
	}
	events := body["events"].([]any)
	if len(events) != 3 {
		t.Fatalf("%d events, want 3", len(events))
	}
	fail, complete, run := events[0].(map[string]any), events[1].(map[string]any), events[2].(map[string]any)
	if fail["status"] != "fail" || fail["color"] != "red" || fail["message"] != "disk full" {
		t.Fatalf("newest: %v", fail)
	}
	if complete["status"] != "complete" || complete["duration"] != 1.5 || complete["exit_code"] != 0.0 || complete["host"] != "db1" || complete["series"] != "s1" {
		t.Fatalf("complete (duration computed from its run): %v", complete)
	}
	if run["status"] != "run" || run["color"] != "blue" || run["timestamp"] != float64(f.srv.Now.Unix()) || run["received_at"] != "2026-03-15T12:30:00Z" {
		t.Fatalf("oldest: %v", run)
	}
	status, body = f.get(t, "/api/v1/monitors/"+f.monitor+"/events?limit=1", f.acct.ManagementKey)
	if status != http.StatusOK || len(body["events"].([]any)) != 1 || body["events"].([]any)[0].(map[string]any)["status"] != "fail" {
		t.Fatalf("limit=1: %d %v", status, body)
	}
}

func TestEventsErrors(t *testing.T) {
	f := newFixture(t)
	other, err := f.srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "other@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/monitors/" + f.monitor + "/events"
	for _, tc := range []struct {
		name, path, key string
		status          int
		field, value    string
	}{
		{"no key", path, "", 401, "code", "unauthenticated"},
		{"ingest key", path, f.acct.IngestKey, 401, "code", "unauthenticated"},
		{"unknown key", path, "mk_unknown", 401, "code", "unauthenticated"},
		{"key without read", path, f.namedKey(t, "write"), 403, "error_code", "insufficient_scope"},
		{"another account's monitor", path, other.ManagementKey, 404, "code", "not_found"},
		{"unknown monitor", "/api/v1/monitors/" + uuid.NewString() + "/events", f.acct.ManagementKey, 404, "code", "not_found"},
		{"limit 0", path + "?limit=0", f.acct.ManagementKey, 400, "code", "invalid_request"},
		{"limit 1001", path + "?limit=1001", f.acct.ManagementKey, 400, "code", "invalid_request"},
		{"limit not a number", path + "?limit=ten", f.acct.ManagementKey, 400, "code", "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.get(t, tc.path, tc.key)
			if status != tc.status || body[tc.field] != tc.value || body["message"] == "" {
				t.Fatalf("got %d %v, want %d with %s=%s", status, body, tc.status, tc.field, tc.value)
			}
		})
	}
	t.Run("read scope is enough", func(t *testing.T) {
		if status, body := f.get(t, path, f.namedKey(t, "read")); status != 200 {
			t.Fatalf("%d %v", status, body)
		}
	})
	t.Run("no leader: 503, unless stale", func(t *testing.T) {
		f.srv.Cluster.FailReads(fmt.Errorf("wait: %w", cluster.ErrNoLeader))
		defer f.srv.Cluster.FailReads(nil)
		if status, body := f.get(t, path, f.acct.ManagementKey); status != 503 || body["code"] != "unavailable" {
			t.Fatalf("%d %v", status, body)
		}
		if status, body := f.get(t, path+"?stale=true", f.acct.ManagementKey); status != 200 {
			t.Fatalf("stale: %d %v", status, body)
		}
	})
}
