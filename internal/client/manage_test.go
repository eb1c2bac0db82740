package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/manage"
	"lookout/internal/client"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
)

// manageFixture is the real Management API over a real state store, with
// one account. The clock is fixed, so each key has 60 requests.
type manageFixture struct {
	srv  *controltest.Server
	url  string
	acct *admin.AccountCreated
	c    *client.Manage
}

func newManage(t *testing.T) *manageFixture {
	t.Helper()
	srv := controltest.NewServer(t)
	acct, err := srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	manage.New(manage.Options{Cluster: srv.Cluster, State: srv.Store, Now: func() time.Time { return srv.Now }}).Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return &manageFixture{srv: srv, url: hs.URL, acct: acct, c: client.NewManage(hs.URL+"/", acct.ManagementKey, nil)}
}

func pingManifest(name string, timeout int64) manifest.Manifest {
	return manifest.Manifest{Kind: manifest.KindPing, Name: name, Enabled: true, TimeoutSeconds: timeout}
}

// validation returns err as a *ValidationError, or fails.
func validation(t *testing.T, err error) *client.ValidationError {
	t.Helper()
	var ve *client.ValidationError
	var ae *client.APIError
	if !errors.As(err, &ve) || !errors.As(err, &ae) || ae.Status != http.StatusUnprocessableEntity {
		t.Fatalf("error %v (%T), want a 422 *ValidationError", err, err)
	}
	return ve
}

func TestManageMonitors(t *testing.T) {
	ctx := context.Background()
	f := newManage(t)
	c := f.c
	acct, err := c.Account(ctx)
	if err != nil || acct.ID != f.acct.ID || acct.Email != "owner@example.com" || acct.QuotaState != "ok" || !acct.Plan.ConfigAsCode ||
		!acct.Usage.PeriodResetsAt.Equal(time.Date(2026, time.April, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("account %+v, %v", acct, err)
	}

	m := pingManifest("backup", 600)
	m.Tags, m.Project = []string{"db"}, proto.String("ops")
	created, err := c.CreateMonitor(ctx, m)
	if err != nil || created.UUID == "" || created.ManifestVersion != 1 || created.Project == nil || *created.Project != "ops" || created.TimeoutSeconds != 600 {
		t.Fatalf("create %+v, %v", created, err)
	}
	check, err := c.CreateMonitorJSON(ctx, json.RawMessage(`{"manifest_version":1,"kind":"http_check","name":"site","schedule":"5m","config":{"url":"https://example.com/","expected_status":200}}`))
	if err != nil || check.Config.Method != "GET" || check.Config.Timeout != 10 || check.Enabled != true {
		t.Fatalf("create check %+v, %v", check, err)
	}
	got, err := c.GetMonitor(ctx, created.UUID)
	if err != nil || !reflect.DeepEqual(got, created) {
		t.Fatalf("get %+v, %v; want %+v", got, err, created)
	}

	// 422s carry every problem, keyed manifest.
	_, err = c.CreateMonitor(ctx, pingManifest("backup", 60))
	if ve := validation(t, err); !reflect.DeepEqual(ve.ErrorCodes, map[string][]string{"manifest": {"name_already_exists"}}) || !ve.Has("name_already_exists") || len(ve.Errors["manifest"]) != 1 {
		t.Fatalf("duplicate: %+v", ve)
	}
	_, err = c.CreateMonitor(ctx, manifest.Manifest{Kind: manifest.KindPing, Name: "bad name!", GraceSeconds: proto.Int64(-1)})
	ve := validation(t, err)
	var codes []string
	for _, p := range ve.Problems() {
		codes = append(codes, p.Key+":"+p.Code)
		if p.Message == "" {
			t.Errorf("problem %+v has no message", p)
		}
	}
	if strings.Join(codes, ",") != "manifest:name_charset_invalid,manifest:timeout_out_of_range,manifest:grace_out_of_range" ||
		!strings.HasPrefix(err.Error(), "HTTP 422: ") || !strings.Contains(err.Error(), "manifest: timeout_out_of_range: ") {
		t.Fatalf("invalid manifest: %v (%v)", codes, err)
	}
	if _, err := c.CreateMonitorJSON(ctx, json.RawMessage(`{not json`)); !validation(t, err).Has("invalid_json") {
		t.Fatalf("invalid JSON: %v", err)
	}

	// Pages and filters.
	c.CreateMonitor(ctx, pingManifest("a1", 60))
	page, err := c.ListMonitors(ctx, client.ListOptions{Kind: manifest.KindPing, Limit: 1})
	if err != nil || len(page.Monitors) != 1 || page.Monitors[0].Name != "a1" || page.NextCursor == "" {
		t.Fatalf("first page %+v, %v", page, err)
	}
	page, err = c.ListMonitors(ctx, client.ListOptions{Kind: manifest.KindPing, Limit: 1, Cursor: page.NextCursor})
	if err != nil || len(page.Monitors) != 1 || page.Monitors[0].Name != "backup" || page.NextCursor != "" {
		t.Fatalf("second page %+v, %v", page, err)
	}
	if page, err := c.ListMonitors(ctx, client.ListOptions{}); err != nil || len(page.Monitors) != 3 {
		t.Fatalf("all: %+v, %v", page, err)
	}
	var ae *client.APIError
	if _, err := c.ListMonitors(ctx, client.ListOptions{Kind: "cron"}); !errors.As(err, &ae) || ae.Status != 400 || ae.Code != "invalid_request" {
		t.Fatalf("bad kind: %v", err)
	}

	// Replace wholesale; the rules are 422s.
	r := pingManifest("backup", 60)
	replaced, err := c.ReplaceMonitor(ctx, created.UUID, r)
	if err != nil || replaced.TimeoutSeconds != 60 || len(replaced.Tags) != 0 || replaced.Project == nil || *replaced.Project != "ops" || replaced.UUID != created.UUID {
		t.Fatalf("replace %+v, %v", replaced, err)
	}
	if _, err := c.ReplaceMonitor(ctx, created.UUID, pingManifest("renamed", 60)); !validation(t, err).Has("name_immutable") {
		t.Fatalf("rename: %v", err)
	}
	if _, err := c.ReplaceMonitorJSON(ctx, check.UUID, json.RawMessage(`{"manifest_version":1,"kind":"ping","name":"site","timeout_seconds":5}`)); !validation(t, err).Has("kind_mismatch") {
		t.Fatalf("kind change: %v", err)
	}

	// Delete sends confirm=true; then the monitor is gone.
	if err := c.DeleteMonitor(ctx, created.UUID); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{c.DeleteMonitor(ctx, created.UUID), func() error { _, err := c.GetMonitor(ctx, created.UUID); return err }()} {
		if !errors.As(err, &ae) || ae.Status != 404 || ae.Code != "not_found" || client.Retryable(err) {
			t.Fatalf("after delete: %v", err)
		}
	}
}

func TestManageApplyAndExport(t *testing.T) {
	ctx := context.Background()
	f := newManage(t)
	c := f.c
	orphan, _ := c.CreateMonitor(ctx, pingManifest("made-by-hand", 60))
	bundle := []byte(`{"manifest_version":1,"monitors":[
		{"kind":"ping","name":"backup","timeout_seconds":600,"tags":["db"]},
		{"kind":"http_check","name":"site","schedule":"5m","config":{"url":"https://example.com/","expected_status":200}}]}`)
	rep, err := c.Apply(ctx, bundle, true)
	want := &client.ApplyReport{DryRun: true, Summary: client.ApplySummary{Create: 2, Orphaned: 1},
		Changes:  []client.ApplyChange{{Name: "backup", Kind: "ping", Action: client.ActionCreate}, {Name: "site", Kind: "http_check", Action: client.ActionCreate}},
		Orphaned: []client.ApplyOrphan{{Name: "made-by-hand", Kind: "ping", UUID: orphan.UUID}}}
	if err != nil || !reflect.DeepEqual(rep, want) || !rep.HasChanges() {
		t.Fatalf("dry run %+v, %v", rep, err)
	}
	rep, err = c.Apply(ctx, bundle, false)
	if err != nil || rep.DryRun || rep.Summary.Create != 2 || rep.Changes[0].UUID == "" {
		t.Fatalf("apply %+v, %v", rep, err)
	}

	// The export applies back unchanged, typed or raw.
	exported, err := c.Export(ctx)
	if err != nil || len(exported.Monitors) != 3 || exported.Monitors[0].UUID != "" || exported.Monitors[2].Kind != manifest.KindHTTP {
		t.Fatalf("export %+v, %v", exported, err)
	}
	rep, err = c.ApplyBundle(ctx, *exported, false)
	if err != nil || rep.HasChanges() || rep.Summary != (client.ApplySummary{Unchanged: 3}) || len(rep.Changes) != 0 {
		t.Fatalf("export applied back %+v, %v", rep, err)
	}
	raw, err := c.ExportJSON(ctx)
	if err != nil || !json.Valid(raw) || strings.Contains(string(raw), "uuid") {
		t.Fatalf("raw export %s, %v", raw, err)
	}
	if rep, err := c.Apply(ctx, raw, true); err != nil || rep.Summary.Unchanged != 3 {
		t.Fatalf("raw export applied back %+v, %v", rep, err)
	}

	// An update's diff: [old, new] as JSON, null for unset.
	b := manifest.Bundle{Monitors: []manifest.Manifest{pingManifest("backup", 900)}}
	b.Monitors[0].DisplayName = "Backup"
	rep, err = c.ApplyBundle(ctx, b, true)
	if err != nil || len(rep.Changes) != 1 || rep.Changes[0].Action != client.ActionUpdate || rep.Changes[0].UUID == "" {
		t.Fatalf("update %+v, %v", rep, err)
	}
	diff := map[string]string{}
	for k, v := range rep.Changes[0].Diff {
		diff[k] = string(v[0]) + " -> " + string(v[1])
	}
	if !reflect.DeepEqual(diff, map[string]string{"timeout_seconds": "600 -> 900", "display_name": `null -> "Backup"`, "tags": `["db"] -> []`}) {
		t.Fatalf("diff %v", diff)
	}

	// All or nothing: problems keyed monitors.<i>, in index order.
	var entries []string
	for i := range 11 {
		timeout := 60
		if i == 2 || i == 10 {
			timeout = 0
		}
		entries = append(entries, fmt.Sprintf(`{"kind":"ping","name":"p%d","timeout_seconds":%d}`, i, timeout))
	}
	_, err = c.Apply(ctx, []byte(`{"manifest_version":1,"monitors":[`+strings.Join(entries, ",")+`]}`), false)
	ve := validation(t, err)
	if ps := ve.Problems(); len(ps) != 2 || ps[0].Key != "monitors.2" || ps[1].Key != "monitors.10" || ps[1].Code != "timeout_out_of_range" {
		t.Fatalf("invalid bundle: %+v", ps)
	}
	if _, err := c.Apply(ctx, []byte(`[1]`), true); !validation(t, err).Has("bundle_invalid") {
		t.Fatalf("not a bundle: %v", err)
	}

	// AllMonitors follows next_cursor (pages of 1000).
	var many []manifest.Manifest
	for i := range 1001 {
		many = append(many, pingManifest(fmt.Sprintf("job-%04d", i), 60))
	}
	// One apply changes at most 1,000 monitors: two parts.
	for _, part := range [][]manifest.Manifest{many[:1000], many} {
		if _, err := c.ApplyBundle(ctx, manifest.Bundle{Monitors: part}, false); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.AllMonitors(ctx, manifest.KindPing)
	if err != nil || len(all) != 1003 || all[0].Name != "backup" || all[1002].Name != "made-by-hand" {
		t.Fatalf("all monitors: %d, %v", len(all), err)
	}
	if checks, err := c.AllMonitors(ctx, manifest.KindHTTP); err != nil || len(checks) != 1 {
		t.Fatalf("all checks: %v, %v", checks, err)
	}
}

func TestManageErrorsAndEvents(t *testing.T) {
	ctx := context.Background()
	f := newManage(t)
	var ae *client.APIError
	if _, err := client.NewManage(f.url, "mk_wrong", nil).Account(ctx); !errors.As(err, &ae) || ae.Status != 401 || ae.Code != "unauthenticated" {
		t.Fatalf("bad key: %v", err)
	}
	adm := client.NewAdmin(f.srv.URL, controltest.Token, nil)
	key, err := adm.CreateKey(ctx, f.acct.ID, client.CreateKeyRequest{Type: client.KeyTypeManagement, Name: "ro", Scopes: []string{client.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	readOnly := client.NewManage(f.url, key.Key, nil)
	if _, err := readOnly.CreateMonitor(ctx, pingManifest("x", 60)); !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "insufficient_scope" {
		t.Fatalf("read-only create: %v", err)
	}
	if _, err := adm.SetPlan(ctx, f.acct.ID, client.PlanRequest{ConfigAsCode: proto.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.Apply(ctx, []byte(`{"manifest_version":1,"monitors":[]}`), true); !errors.As(err, &ae) || ae.Status != 403 || ae.Code != "config_as_code_disabled" {
		t.Fatalf("apply without config as code: %v", err)
	}
	if _, err := f.c.Export(ctx); err != nil {
		t.Fatalf("export without config as code: %v", err)
	}

	// Events, newest first.
	at := f.srv.Now.UnixMilli()
	res, err := f.srv.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: []*raftv1.Event{
		{AccountId: f.acct.ID, Monitor: "backup", EventType: "ping", Status: "run", Series: "s1", ReceivedUnixMs: at},
		{AccountId: f.acct.ID, Monitor: "backup", EventType: "ping", Status: "complete", Series: "s1", Host: "db1", ExitCode: proto.Int64(0), ReceivedUnixMs: at + 1500},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetEvents()[0].GetMonitorUuid()
	evs, err := f.c.Events(ctx, id, 0)
	if err != nil || len(evs) != 2 || evs[0].Status != "complete" || evs[0].Host != "db1" || evs[0].ExitCode == nil || *evs[0].ExitCode != 0 ||
		evs[1].Status != "run" || evs[0].ReceivedAt.IsZero() {
		t.Fatalf("events %+v, %v", evs, err)
	}
	if evs, err := f.c.Events(ctx, id, 1); err != nil || len(evs) != 1 {
		t.Fatalf("one event: %+v, %v", evs, err)
	}
	if _, err := f.c.Events(ctx, "no-such-monitor", 0); !errors.As(err, &ae) || ae.Status != 404 {
		t.Fatalf("unknown monitor: %v", err)
	}

	// 429 keeps Retry-After; the read-only key has its own bucket.
	for i := 0; ; i++ {
		_, err := readOnly.Account(ctx)
		if err == nil {
			continue
		}
		if !errors.As(err, &ae) || ae.Status != 429 || ae.Code != "rate_limited" || !client.Retryable(err) || client.RetryAfter(err) < time.Second || i != 59 {
			t.Fatalf("request %d: %v (retry after %s)", i+1, err, client.RetryAfter(err))
		}
		break
	}

	// No answer at all.
	hs := httptest.NewServer(http.NotFoundHandler())
	hs.Close()
	if _, err := client.NewManage(hs.URL, "mk_x", nil).Account(ctx); err == nil || !client.Retryable(err) {
		t.Fatalf("closed server: %v", err)
	}
}
