package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/controltest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// env is the Ingest API on loopback over a real state store (controltest),
// with either the store's own Cluster or a canned one.
type env struct {
	t     *testing.T
	admin *controltest.Server
	api   *API
	url   string

	mu  sync.Mutex
	now time.Time
}

// newEnv starts the Ingest API. cl nil: pings are applied to the real
// state through controltest's Cluster.
func newEnv(t *testing.T, cl Cluster, batch BatchSettings) *env {
	t.Helper()
	e := &env{t: t, admin: controltest.NewServer(t)}
	e.now = e.admin.Now
	if cl == nil {
		cl = e.admin.Cluster
	}
	e.api = New(Options{
		Health:         fakeHealth{ok: true},
		Cluster:        cl,
		State:          e.admin.Store,
		Logger:         hclog.NewNullLogger(),
		Now:            e.clock,
		RetentionCount: 100,
		Batch:          batch,
	})
	e.api.Start()
	t.Cleanup(e.api.Stop)
	mux := http.NewServeMux()
	e.api.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

// account is an account made through the operator API.
type account struct {
	ID            string `json:"id"`
	IngestKey     string `json:"ingest_key"`
	ManagementKey string `json:"management_key"`
}

// newAccount makes an account with plan (a JSON object, "" for the
// default plan).
func (e *env) newAccount(plan string) account {
	e.t.Helper()
	body := `{"email":"` + strings.ToLower(strings.ReplaceAll(e.t.Name(), "/", "-")) + `-` +
		time.Now().Format("150405.000000000") + `@example.com"`
	if plan != "" {
		body += `,"plan":` + plan
	}
	req, _ := http.NewRequest("POST", e.admin.URL+"/admin/v1/accounts", strings.NewReader(body+"}"))
	req.Header.Set("Authorization", "Bearer "+controltest.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var a account
	if resp.StatusCode != 201 {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("create account: %d %s", resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		e.t.Fatal(err)
	}
	return a
}

// response is one answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; headers are name, value pairs.
func (e *env) do(method, path, body string, headers ...string) response {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// post sends POST /ping with key as a bearer token.
func (e *env) post(key, body string, headers ...string) response {
	e.t.Helper()
	return e.do("POST", "/ping", body, append([]string{"Authorization", "Bearer " + key}, headers...)...)
}

// get sends GET path with key as a bearer token.
func (e *env) get(key, path string, headers ...string) response {
	e.t.Helper()
	return e.do("GET", path, "", append([]string{"Authorization", "Bearer " + key}, headers...)...)
}

// json decodes the body as an object of strings (true for the boolean
// true).
func (r response) json(t *testing.T) map[string]string {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal(r.body, &raw); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	m := map[string]string{}
	for k, v := range raw {
		m[k] = fmt.Sprint(v)
	}
	return m
}

// want checks the status and that the body is exactly want (a JSON object
// of strings).
func (r response) want(t *testing.T, status int, want map[string]string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	got := r.json(t)
	if len(got) != len(want) {
		t.Fatalf("body %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("body %v, want %v", got, want)
		}
	}
}

// wantError checks a {"error": msg} answer.
func (r response) wantError(t *testing.T, status int, msg string) {
	t.Helper()
	r.want(t, status, map[string]string{"error": msg})
}

var (
	success = map[string]string{"status": "success"}
	// created is the answer to a ping that created its monitor.
	created = map[string]string{"status": "success", "created": "true"}
)

// cannedCluster is the edge fake: it answers each event of an IngestBatch
// with answer(event) (STORED with an ok quota by default) and records what
// it was asked.
type cannedCluster struct {
	answer func(*raftv1.Event) *raftv1.EventResult

	mu      sync.Mutex
	err     error
	batches [][]*raftv1.Event
	retain  []int64
}

// ConsistentRead finds nothing to wait for: the state is the store's own.
func (c *cannedCluster) ConsistentRead(context.Context) error { return nil }

func (c *cannedCluster) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	events := cmd.GetIngestBatch().GetEvents()
	c.batches = append(c.batches, events)
	c.retain = append(c.retain, cmd.GetIngestBatch().GetRetentionCount())
	if c.err != nil {
		return nil, c.err
	}
	res := &raftv1.Result{Status: raftv1.Status_STATUS_OK}
	for _, ev := range events {
		if c.answer != nil {
			res.Events = append(res.Events, c.answer(ev))
			continue
		}
		res.Events = append(res.Events, &raftv1.EventResult{
			Outcome: raftv1.EventOutcome_EVENT_OUTCOME_STORED,
			Quota:   &raftv1.QuotaStatus{State: "ok", Used: 1, ResetsAtUnixMs: nextMonth},
		})
	}
	return res, nil
}

// events returns every event applied so far, in order.
func (c *cannedCluster) events() []*raftv1.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*raftv1.Event
	for _, b := range c.batches {
		out = append(out, b...)
	}
	return out
}

func (c *cannedCluster) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
}

// nextMonth is the quota reset of controltest's clock (2026-03-15 12:30 UTC).
var nextMonth = time.Date(2026, time.April, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// bigBurst is a plan whose rate limit never gets in the way of a test.
const bigBurst = `{"ingest_burst": 100000}`
