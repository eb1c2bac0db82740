package public_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/ingest"
	"lookout/control/manage"
	"lookout/control/public"
	"lookout/control/state"
	"lookout/internal/clientaddr"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// node is a control node's HTTP side on loopback, as lookout control
// mounts it: the Ingest, Management and operator APIs and the public pages
// on one mux over a real store, with a clock the test moves. The public
// pages read the store through a counter of their reads.
type node struct {
	t     *testing.T
	url   string
	store *state.Store
	c     *controltest.Cluster
	admin *admin.API
	clock *clock
	reads *countingState
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type health struct{}

func (health) Healthy() (bool, string) { return true, "" }
func (health) ID() string              { return "node-1" }
func (health) Leader() string          { return "node-1" }

// countingState counts every read the public pages make.
type countingState struct {
	public.State
	n atomic.Int64
}

func (c *countingState) count() int64 { return c.n.Load() }

func (c *countingState) AccountByBadgeKey(key string) (*statev1.Account, error) {
	c.n.Add(1)
	return c.State.AccountByBadgeKey(key)
}
func (c *countingState) MonitorByName(a, kind, name string) (*statev1.Monitor, error) {
	c.n.Add(1)
	return c.State.MonitorByName(a, kind, name)
}
func (c *countingState) Monitors(a string) ([]*statev1.Monitor, error) {
	c.n.Add(1)
	return c.State.Monitors(a)
}
func (c *countingState) CheckStatus(id string) (*statev1.CheckStatus, error) {
	c.n.Add(1)
	return c.State.CheckStatus(id)
}
func (c *countingState) UnknownSince(m *statev1.Monitor) (int64, error) {
	c.n.Add(1)
	return c.State.UnknownSince(m)
}
func (c *countingState) StatusPageBySlug(slug string) (string, *statev1.StatusPage, error) {
	c.n.Add(1)
	return c.State.StatusPageBySlug(slug)
}
func (c *countingState) Uptimes(ids []string) (map[string]*statev1.Uptime, error) {
	c.n.Add(1)
	return c.State.Uptimes(ids)
}

func newNode(t *testing.T) *node {
	t.Helper()
	store := controltest.OpenStore(t)
	clk := &clock{now: time.Date(2026, time.March, 15, 12, 30, 0, 0, time.UTC)}
	c := controltest.NewCluster(store, clk.Now)
	mux := http.NewServeMux()
	adminAPI := admin.New(admin.Options{Cluster: c, State: store, Token: controltest.Token, Now: clk.Now, Channels: controltest.Channels(), PasswordCost: bcrypt.MinCost})
	adminAPI.Register(mux)
	in := ingest.New(ingest.Options{Health: health{}, Cluster: c, State: store, Now: clk.Now, RetentionCount: 1000})
	in.Register(mux)
	in.Start()
	t.Cleanup(in.Stop)
	manage.New(manage.Options{Cluster: c, State: store, Now: clk.Now}).Register(mux)
	reads := &countingState{State: store}
	p, err := public.New(public.Options{State: reads, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	p.Register(mux)
	// Trusting loopback as a proxy, as lookout control --trusted-proxies
	// would: tests stand for distinct clients with X-Forwarded-For.
	srv := httptest.NewServer(clientaddr.New(mustPrefixes(t, "127.0.0.0/8,::1")).Wrap(mux))
	t.Cleanup(srv.Close)
	return &node{t: t, url: srv.URL, store: store, c: c, admin: adminAPI, clock: clk, reads: reads}
}

func mustPrefixes(t *testing.T, list string) []netip.Prefix {
	t.Helper()
	p, err := clientaddr.ParseTrusted(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// account is a signed-up account with its keys.
type account struct {
	ID, IngestKey, ManagementKey string
}

func (n *node) signUp(email string) account {
	n.t.Helper()
	c, err := n.admin.CreateAccount(context.Background(), admin.AccountRequest{Email: email})
	if err != nil {
		n.t.Fatal(err)
	}
	return account{ID: c.ID, IngestKey: c.IngestKey, ManagementKey: c.ManagementKey}
}

// api calls the Management API with a's key and decodes the answer.
func (n *node) api(a account, method, path string, body any) (int, map[string]any) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = strings.NewReader(string(raw))
	}
	req, _ := http.NewRequest(method, n.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+a.ManagementKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// monitor creates a monitor from a manifest and returns its uuid.
func (n *node) monitor(a account, manifest map[string]any) string {
	n.t.Helper()
	status, body := n.api(a, "POST", "/api/v1/monitors", manifest)
	if status != 201 {
		n.t.Fatalf("create %v: %d %v", manifest["name"], status, body)
	}
	return body["uuid"].(string)
}

// ping sends a ping of a's monitor with status.
func (n *node) ping(a account, monitor, status string) {
	n.t.Helper()
	req, _ := http.NewRequest("POST", n.url+"/ping", strings.NewReader(`{"event_type":"ping","monitor":"`+monitor+`","status":"`+status+`"}`))
	req.Header.Set("Authorization", "Bearer "+a.IngestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		n.t.Fatalf("ping %s: %d %s", monitor, resp.StatusCode, b)
	}
}

// verdict records a final execution of a check, as the scheduler does.
func (n *node) verdict(a account, check, status string) {
	n.t.Helper()
	now := n.clock.Now().UnixMilli()
	res, err := n.c.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{
		Executions: []*raftv1.Execution{{AccountId: a.ID, CheckUuid: check, Region: state.RegionControl, SlotUnixMs: now - 1000,
			Status: status, Attempts: 1, StartedUnixMs: now - 1000, FinishedUnixMs: now - 900}}}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		n.t.Fatalf("record execution: %v %v", res, err)
	}
}

// get fetches path without any credential, as anyone on the web would,
// from client address from ("" for the test's own).
func (n *node) get(path, from string) (int, http.Header, string) {
	n.t.Helper()
	req, _ := http.NewRequest("GET", n.url+path, nil)
	if from != "" {
		req.Header.Set("X-Forwarded-For", from)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func pingManifest(name string, tags ...string) map[string]any {
	return map[string]any{"manifest_version": 1, "kind": "ping", "name": name, "enabled": true, "timeout_seconds": 600, "tags": nonNil(tags)}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
