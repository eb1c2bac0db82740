package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/hashicorp/go-hclog"
	"golang.org/x/crypto/bcrypt"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/ingest"
	"lookout/control/manage"
	"lookout/control/openapi"
	"lookout/control/public"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// fixture is every HTTP API of a control node on one loopback listener, as
// lookout control serves them: the real ingest, admin and manage handlers
// over a real state store (controltest), whose Cluster applies commands
// directly and can be told to fail. It holds a few accounts set up for the
// error classes of the table.
type fixture struct {
	t      *testing.T
	url    string
	srv    *controltest.Server
	admin  *admin.API
	clock  *clock
	health *health
	doc    *openapi3.T
	router routers.Router

	// main has a plan with a large ingest burst, a "backup" monitor with events, a notification
	// group and named keys.
	main *admin.AccountCreated
	// other is a second account (its monitors are not main's).
	other *admin.AccountCreated
	// limited is at its monitor limit (0): every new monitor is refused.
	limited *admin.AccountCreated
	// throttled has an ingest burst of 1, already used, and a rate that
	// does not refill while the clock stands still.
	throttled *admin.AccountCreated
	// suspended is past its monthly quota and grace period.
	suspended *admin.AccountCreated
	// noCode has config as code disabled.
	noCode *admin.AccountCreated
	// creations may create one monitor a minute by ping, and has.
	creations *admin.AccountCreated

	monitor     string // uuid of main's "backup" monitor
	readKey     string // a named management key of main with scope read
	writeKey    string // a named management key of main with scope write
	revokeKeyID string // id of an ingest key of main, for the revocation case
	userID      string // id of a viewer of other, for the user cases
	group       string // name of a notification group of main
	groupID     string // its id
	goodChannel string // a channel of main whose receiver accepts
	badChannel  string // a channel of main whose receiver answers 500
	burstKey    string // a named read key of main, for the Management API's 429

	// Monitors of main made through POST /api/v1/monitors.
	nightly  string // uuid of the ping monitor "nightly"
	homepage string // uuid of the http_check "homepage"
	cert     string // uuid of the ssl_check "cert"
	private  string // uuid of the http_check "private api", with secrets
	port     string // uuid of the tcp_check "db port"
	record   string // uuid of the dns_check "www record"
	doomed   string // uuid of the ping monitor "doomed", for the deletion case
	// cursor is the next_cursor of GET /api/v1/monitors?limit=1.
	cursor string
	// badgeKey is main's; main's status page is at /status/main.
	badgeKey string
}

// clock is the fixture's time; it stands still unless advanced.
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

// health stands in for the cluster node behind /health (an edge of the
// handlers: the node itself is tested in the cluster package).
type health struct {
	mu     sync.Mutex
	reason string // "" while healthy
}

func (h *health) Healthy() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reason == "", h.reason
}

func (h *health) ID() string { return "node-1" }

func (h *health) Leader() string {
	if ok, _ := h.Healthy(); ok {
		return "node-1"
	}
	return ""
}

func (h *health) set(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reason = reason
}

// loadDocument loads and validates the embedded document.
func loadDocument(t *testing.T) *openapi3.T {
	t.Helper()
	ctx := context.Background()
	loader := openapi3.NewLoader()
	loader.Context = ctx
	doc, err := loader.LoadFromData(openapi.Document())
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(ctx, openapi3.EnableMultiError()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// newFixture starts the APIs and sets up the accounts.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := controltest.NewServer(t)
	f := &fixture{t: t, srv: srv, clock: &clock{now: srv.Now}, health: &health{}}
	f.doc = loadDocument(t)
	router, err := gorillamux.NewRouter(f.doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	f.router = router

	log := hclog.NewNullLogger()
	f.admin = admin.New(admin.Options{Cluster: srv.Cluster, State: srv.Store, Token: controltest.Token, Logger: log, Now: f.clock.Now, Channels: controltest.Channels(), PasswordCost: bcrypt.MinCost})
	in := ingest.New(ingest.Options{
		Health: f.health, Cluster: srv.Cluster, State: srv.Store, Logger: log,
		Now: f.clock.Now, RetentionCount: 100,
	})
	in.Start()
	t.Cleanup(in.Stop)
	mg := manage.New(manage.Options{Cluster: srv.Cluster, State: srv.Store, Logger: log, Now: f.clock.Now})

	pub, err := public.New(public.Options{State: srv.Store, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}

	mux := http.NewServeMux()
	in.Register(mux)
	f.admin.Register(mux)
	mg.Register(mux)
	pub.Register(mux)
	mux.Handle("GET /openapi.json", openapi.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	f.url = hs.URL

	// main's burst outlasts the table: the clock stands still, so no
	// token comes back.
	f.main = f.account("owner@example.com", &admin.PlanRequest{IngestBurst: ptr[int64](1_000_000)})
	f.other = f.account("other@example.com", nil)
	f.limited = f.account("limited@example.com", &admin.PlanRequest{MonitorLimit: ptr[int64](0)})
	f.throttled = f.account("throttled@example.com", &admin.PlanRequest{IngestRatePerSecond: ptr(0.001), IngestBurst: ptr[int64](1)})
	f.suspended = f.account("suspended@example.com", &admin.PlanRequest{MonthlyEventLimit: ptr[int64](1), QuotaGraceSeconds: ptr[int64](60)})
	f.noCode = f.account("nocode@example.com", &admin.PlanRequest{ConfigAsCode: ptr(false)})
	f.creations = f.account("creations@example.com", &admin.PlanRequest{MonitorsCreatedPerMinute: ptr[int64](1)})

	// main's "backup" monitor, with a run and its complete.
	f.mustPing(f.main.IngestKey, `{"event_type":"ping","monitor":"backup","status":"run","series":"s1"}`, `"success"`)
	f.clock.advance(1500 * time.Millisecond)
	f.mustPing(f.main.IngestKey, `{"event_type":"ping","monitor":"backup","status":"complete","series":"s1","host":"db1","exit_code":0}`, `"success"`)
	m, err := srv.Store.MonitorByName(f.main.ID, "ping", "backup")
	if err != nil {
		t.Fatalf("monitor backup: %v", err)
	}
	f.monitor = m.GetUuid()

	// creations uses its one creation of the minute.
	f.mustPing(f.creations.IngestKey, `{"event_type":"ping","monitor":"first","status":"run"}`, `"success"`)

	// throttled uses its only token.
	f.mustPing(f.throttled.IngestKey, `{"event_type":"ping","monitor":"backup","status":"run"}`, `"success"`)

	// suspended goes past its limit of 1 event, then past its grace period.
	f.mustPing(f.suspended.IngestKey, `{"event_type":"ping","monitor":"backup","status":"run"}`, `"success"`)
	f.mustPing(f.suspended.IngestKey, `{"event_type":"ping","monitor":"backup","status":"run"}`, `"success"`)
	f.clock.advance(2 * time.Minute)
	f.mustPing(f.suspended.IngestKey, `{"event_type":"ping","monitor":"backup","status":"run"}`, `"suspended"`)

	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	f.mustAdmin("POST", "/admin/v1/accounts/"+f.main.ID+"/keys", `{"type":"management","name":"reader","scopes":["read"]}`, &key)
	f.readKey = key.Key
	f.mustAdmin("POST", "/admin/v1/accounts/"+f.main.ID+"/keys", `{"type":"management","name":"writer","scopes":["write"]}`, &key)
	f.writeKey = key.Key
	f.mustAdmin("POST", "/admin/v1/accounts/"+f.main.ID+"/keys", `{"type":"ingest","name":"to-revoke"}`, &key)
	f.revokeKeyID = key.ID
	var user struct {
		ID string `json:"id"`
	}
	f.mustAdmin("POST", "/admin/v1/accounts/"+f.other.ID+"/users", `{"email":"viewer@example.com","role":"viewer"}`, &user)
	f.userID = user.ID
	f.mustAdmin("POST", "/admin/v1/accounts/"+f.main.ID+"/keys", `{"type":"management","name":"burst","scopes":["read"]}`, &key)
	f.burstKey = key.Key
	f.group = "on-call"
	for _, ch := range []struct {
		status int
		id     *string
	}{{http.StatusOK, &f.goodChannel}, {http.StatusInternalServerError, &f.badChannel}} {
		status := ch.status
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(rcv.Close)
		var created struct {
			ID string `json:"id"`
		}
		f.mustAdmin("POST", "/admin/v1/accounts/"+f.main.ID+"/channels",
			`{"type":"slack","name":"ops","default":false,"config":{"webhook_url":"https://hooks.slack.com/services/x","api_url":"`+rcv.URL+`"}}`, &created)
		*ch.id = created.ID
	}
	var group struct {
		ID string `json:"id"`
	}
	f.mustAdmin("POST", "/admin/v1/accounts/"+f.main.ID+"/notification-groups", `{"name":"on-call","channels":[]}`, &group)
	f.groupID = group.ID

	f.nightly = f.mustCreate(`{"manifest_version":1,"kind":"ping","name":"nightly","timeout_seconds":3600,"tags":["db"],"notification_group":"on-call","project":"infra"}`)
	f.homepage = f.mustCreate(`{"manifest_version":1,"kind":"http_check","name":"homepage","schedule":"5m","config":{"url":"https://example.com/","expected_status":200}}`)
	f.cert = f.mustCreate(`{"manifest_version":1,"kind":"ssl_check","name":"cert","schedule":"0 6 * * *","config":{"domain":"example.com"}}`)
	f.private = f.mustCreate(`{"manifest_version":1,"kind":"http_check","name":"private api","schedule":"1m","regions":["eu-1"],"config":{"url":"https://api.corp.test/health","method":"POST","body":"{}","headers":{"Authorization":"Bearer s3cret","Content-Type":"application/json"},"expected_status":["2xx",304],"content_absent":"maintenance","json_path":[{"path":"$.status","equals":"ok"}],"max_response_ms":2000,"follow_redirects":false,"tls_skip_verify":true}}`)
	f.port = f.mustCreate(`{"manifest_version":1,"kind":"tcp_check","name":"db port","schedule":"1m","regions":["eu-1"],"config":{"host":"db.corp.test","port":5432,"send":"PING\r\n","expect":"PONG"}}`)
	f.record = f.mustCreate(`{"manifest_version":1,"kind":"dns_check","name":"www record","schedule":"5m","config":{"name":"www.example.com","type":"A","server":"1.1.1.1","expected":["93.184.216.34"]}}`)
	f.recordExecutions()
	f.doomed = f.mustCreate(`{"manifest_version":1,"kind":"ping","name":"doomed","timeout_seconds":60}`)
	var page struct {
		NextCursor string `json:"next_cursor"`
	}
	a := f.send("GET", "/api/v1/monitors?limit=1", bearer(f.main.ManagementKey), "")
	if err := json.Unmarshal(a.body, &page); a.status != 200 || err != nil || page.NextCursor == "" {
		t.Fatalf("setup list: %d %s", a.status, a.body)
	}
	f.cursor = page.NextCursor

	// main's badge key and status page (of the "db" tag).
	if f.badgeKey, err = mg.BadgeKey(context.Background(), f.main.ID); err != nil {
		t.Fatal(err)
	}
	if _, errs, err := mg.PutStatusPage(context.Background(), f.main.ID, manage.StatusPageRequest{Enabled: true, Slug: "main", Title: "Main",
		Match: manage.StatusPageMatch{Tags: []string{"db"}}}); err != nil || len(errs) > 0 {
		t.Fatalf("setup status page: %v %v", errs, err)
	}
	return f
}

// mustCreate creates a monitor of main through the Management API and
// returns its uuid.
func (f *fixture) mustCreate(manifest string) string {
	f.t.Helper()
	a := f.send("POST", "/api/v1/monitors", bearer(f.main.ManagementKey), manifest)
	var m struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(a.body, &m); a.status != 201 || err != nil || m.UUID == "" {
		f.t.Fatalf("setup create %s: %d %s", manifest, a.status, a.body)
	}
	return m.UUID
}

func ptr[T any](v T) *T { return &v }

// account creates an account through the operator API's Go entry point.
func (f *fixture) account(email string, plan *admin.PlanRequest) *admin.AccountCreated {
	f.t.Helper()
	acct, err := f.admin.CreateAccount(context.Background(), admin.AccountRequest{Email: email, Plan: plan})
	if err != nil {
		f.t.Fatalf("create account %s: %v", email, err)
	}
	return acct
}

// answer is a real answer of the APIs.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// send makes one request to the APIs. A body is sent as application/json
// unless headers say otherwise.
func (f *fixture) send(method, path string, header http.Header, body string) answer {
	f.t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if body != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}
}

// mustPing posts a ping that must answer 200 with a body containing want.
func (f *fixture) mustPing(key, body, want string) {
	f.t.Helper()
	a := f.send("POST", "/ping", bearer(key), body)
	if a.status != 200 || !bytes.Contains(a.body, []byte(want)) {
		f.t.Fatalf("setup ping %s: %d %s, want 200 with %s", body, a.status, a.body, want)
	}
}

// mustAdmin calls the operator API, which must answer 2xx, and decodes the
// answer into v (when not nil).
func (f *fixture) mustAdmin(method, path, body string, v any) {
	f.t.Helper()
	a := f.send(method, path, bearer(controltest.Token), body)
	if a.status/100 != 2 {
		f.t.Fatalf("setup %s %s: %d %s", method, path, a.status, a.body)
	}
	if v != nil {
		if err := json.Unmarshal(a.body, v); err != nil {
			f.t.Fatalf("setup %s %s: %v", method, path, err)
		}
	}
}

// bearer is an Authorization header with key; more name, value pairs may
// follow.
func bearer(key string, more ...string) http.Header {
	return headers(append([]string{"Authorization", "Bearer " + key}, more...)...)
}

// headers makes a header from name, value pairs.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// recordExecutions gives homepage a failed execution and cert a running
// and a successful one, as the scheduler records them.
func (f *fixture) recordExecutions() {
	f.t.Helper()
	slot := f.srv.Now.Add(-time.Minute).UnixMilli()
	execs := []*raftv1.Execution{
		{AccountId: f.main.ID, CheckUuid: f.homepage, Region: state.RegionControl, SlotUnixMs: slot, Status: state.ExecFailed, Attempts: 4,
			StartedUnixMs: slot, FinishedUnixMs: slot + 7200, DurationMs: 35, Error: "the answer's status is 503, want 200", ErrorKind: "unexpected_status",
			Http: &raftv1.ExecutionHTTP{StatusCode: 503, ResponseBytes: 19, DnsMs: 2, ConnectMs: 5, TlsMs: 11, TtfbMs: 30, TotalMs: 35}},
		{AccountId: f.main.ID, CheckUuid: f.cert, Region: state.RegionControl, SlotUnixMs: slot, Status: state.ExecSuccess, Attempts: 1,
			StartedUnixMs: slot, FinishedUnixMs: slot + 40, DurationMs: 40,
			Ssl: &raftv1.ExecutionSSL{ExpiresUnixMs: slot + 90*86_400_000, DaysLeft: 90, Issuer: "CN=Test CA", Subject: "CN=example.com",
				DnsNames: []string{"example.com"}, ChainValid: true, HostnameValid: true, Level: "ok"}},
		{AccountId: f.main.ID, CheckUuid: f.cert, Region: state.RegionControl, SlotUnixMs: slot + 60_000, Status: state.ExecRunning, Attempts: 1, StartedUnixMs: slot + 60_000},
		{AccountId: f.main.ID, CheckUuid: f.port, Region: "eu-1", Agent: "edge-1", AgentId: "ag_1", SlotUnixMs: slot, Status: state.ExecSuccess, Attempts: 1,
			StartedUnixMs: slot, FinishedUnixMs: slot + 4, DurationMs: 4, Tcp: &raftv1.ExecutionTCP{ConnectMs: 3}},
		{AccountId: f.main.ID, CheckUuid: f.record, Region: state.RegionControl, SlotUnixMs: slot, Status: state.ExecFailed, Attempts: 1,
			StartedUnixMs: slot, FinishedUnixMs: slot + 9, DurationMs: 9, ErrorKind: "dns_answer",
			Error: "93.184.216.34 is not among the A records of www.example.com (93.184.215.14)", Dns: &raftv1.ExecutionDNS{Answers: []string{"93.184.215.14"}, RttMs: 8}},
	}
	res, err := f.srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: &raftv1.RecordExecutions{Executions: execs}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		f.t.Fatalf("record executions: %v %v", res, err)
	}
}
