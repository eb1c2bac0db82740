package ingest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lookout/agent/buffer"
	"lookout/internal/apikey"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// keys is a KeyStore of fixed keys.
type keys struct {
	mu     sync.Mutex
	byHash map[string]*agentv1.IngestKey
}

func (k *keys) KeyByHash(hash []byte) (*agentv1.IngestKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := k.byHash[string(hash)]
	return key, ok
}

// quotas is a Quotas of fixed statuses.
type quotas map[string]*raftv1.QuotaStatus

func (q quotas) Last(accountID string) *raftv1.QuotaStatus { return q[accountID] }

// env is the local Ingest API over a real buffer in a temp dir, served by
// httptest.
type env struct {
	t     *testing.T
	srv   *httptest.Server
	dir   string // the buffer's
	buf   *buffer.Buffer
	keys  *keys
	reg   *prometheus.Registry
	mu    sync.Mutex
	clock time.Time
}

// envOptions adjusts an env.
type envOptions struct {
	maxBytes  int64
	retention time.Duration
	quotas    Quotas
	sink      Sink // instead of the buffer
	// checkEvery is the buffer's CheckInterval (0: its default).
	checkEvery time.Duration
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "buffer")
	buf, err := buffer.Open(buffer.Options{Dir: dir, MaxBytes: o.maxBytes, Small: true, CheckInterval: o.checkEvery})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Close() })
	e := &env{t: t, dir: dir, buf: buf, keys: &keys{byHash: map[string]*agentv1.IngestKey{}}, reg: prometheus.NewRegistry(),
		clock: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	var sink Sink = buf
	if o.sink != nil {
		sink = o.sink
	}
	api := New(Options{
		Keys: e.keys, Sink: sink, Quotas: o.quotas, Stats: buf.Stats, Health: buf.Health, RetentionAge: o.retention,
		Link:       func() Link { return Link{Connected: false, Control: "http://cp:8080", Region: "eu"} },
		Gossip:     func() Gossip { return Gossip{State: "waiting_for_key", Members: 1} },
		Now:        e.now,
		Registerer: e.reg,
	})
	e.srv = httptest.NewServer(api.Handler())
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.clock
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	e.clock = e.clock.Add(d)
	e.mu.Unlock()
}

// addKey makes an ingest key of account with plan and returns its secret.
func (e *env) addKey(id, account string, plan *raftv1.Plan) string {
	secret, hash, err := apikey.New(apikey.Ingest)
	if err != nil {
		e.t.Fatal(err)
	}
	e.keys.mu.Lock()
	e.keys.byHash[string(hash)] = &agentv1.IngestKey{Id: id, Hash: hash, AccountId: account, Plan: plan}
	e.keys.mu.Unlock()
	return secret
}

// response is an answer, read whole.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request with key as bearer token ("" for none) and headers
// as name, value pairs.
func (e *env) do(method, path, key, body string, hdr ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

func (e *env) post(key, body string, hdr ...string) response {
	e.t.Helper()
	return e.do("POST", "/ping", key, body, hdr...)
}

func (e *env) get(key, path string, hdr ...string) response {
	e.t.Helper()
	return e.do("GET", path, key, "", hdr...)
}

// want checks the status and the JSON body.
func (r response) want(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status || !jsonEqual(r.body, body) {
		t.Fatalf("answer %d %s, want %d %s", r.status, r.body, status, body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
}

// wantError checks a {"error": msg} answer.
func (r response) wantError(t *testing.T, status int, msg string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"error": msg})
	r.want(t, status, string(b))
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// events returns what the buffer holds.
func (e *env) events() []*raftv1.Event {
	e.t.Helper()
	got, err := e.buf.Events(0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]*raftv1.Event, len(got))
	for i, g := range got {
		out[i] = g.Event
	}
	return out
}

// counter reads lookout_agent_ingest_events_total{outcome}.
func (e *env) counter(outcome string) float64 {
	e.t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "lookout_agent_ingest_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

const (
	success  = `{"status":"success"}`
	pingBody = `{"event_type":"ping","monitor":"backup","status":"run"}`
)

// bigBurst is a plan whose rate limit no test reaches by accident.
var bigBurst = &raftv1.Plan{IngestRatePerSecond: 1000, IngestBurst: 10000}
