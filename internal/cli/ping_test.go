package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"lookout/internal/client"
)

// answer is one scripted answer of an ingestServer.
type answer struct {
	status int
	header map[string]string
	body   string
}

// ingestServer is a fake Ingest API: it records every POST /ping and gives
// the scripted answers in turn, then 200 {"status":"success"}.
type ingestServer struct {
	*httptest.Server
	mu      sync.Mutex
	events  []client.Event
	auth    []string
	answers []answer
}

func newIngestServer(t *testing.T, answers ...answer) *ingestServer {
	t.Helper()
	s := &ingestServer{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev client.Event
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.URL.Path != "/ping" || json.Unmarshal(body, &ev) != nil {
			t.Errorf("unexpected request %s %s %q", r.Method, r.URL, body)
		}
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		a := answer{status: 200, body: `{"status":"success"}`}
		if len(s.answers) > 0 {
			a, s.answers = s.answers[0], s.answers[1:]
		}
		s.mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(s.Close)
	return s
}

// received returns the events received so far.
func (s *ingestServer) received() []client.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]client.Event(nil), s.events...)
}

// fakeClock is a clock whose sleeps return at once and move it on.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	sleeps []time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	c.sleeps = append(c.sleeps, d)
	return ctx.Err()
}

func (c *fakeClock) slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// testEnv is an environment that talks to addr with the key ck_test, on a
// fake clock with no jitter, on the host "test-host".
type testEnv struct {
	ingestEnv
	clock          *fakeClock
	stdout, stderr *bytes.Buffer
	vars           map[string]string
}

func newTestEnv(addr string) *testEnv {
	e := &testEnv{clock: &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{},
		vars: map[string]string{"LOOKOUT_ADDR": addr, "LOOKOUT_INGEST_KEY": "ck_test"}}
	e.ingestEnv = ingestEnv{
		getenv:   func(k string) string { return e.vars[k] },
		hostname: func() (string, error) { return "test-host", nil },
		stdout:   e.stdout, stderr: e.stderr,
		retry: retryPolicy{base: retryBase, max: retryMax, jitter: func(d time.Duration) time.Duration { return d },
			now: e.clock.now, sleep: e.clock.sleep},
	}
	return e
}

func TestPingSendsEvent(t *testing.T) {
	srv := newIngestServer(t)
	env := newTestEnv(srv.URL)
	env.vars["LOOKOUT_PROJECT"] = "from-env"
	before := time.Now().Unix()
	err := runPingEnv(context.Background(), []string{"backup-db", "--status", "complete", "--duration", "12.5", "--exit-code", "0",
		"--message", "all good", "--series", "s1", "--host", "db-1"}, env.ingestEnv)
	if err != nil {
		t.Fatal(err)
	}
	evs := srv.received()
	if len(evs) != 1 || srv.auth[0] != "Bearer ck_test" {
		t.Fatalf("received %+v with %q", evs, srv.auth)
	}
	ev := evs[0]
	if ev.EventID == "" || ev.Timestamp == nil || *ev.Timestamp < before || *ev.Timestamp > time.Now().Unix() {
		t.Errorf("event id %q, timestamp %v", ev.EventID, ev.Timestamp)
	}
	ev.EventID, ev.Timestamp = "", nil
	want := client.Event{EventType: "ping", Monitor: "backup-db", Status: "complete", Duration: new(12.5), ExitCode: new(0),
		Message: "all good", Series: "s1", Host: "db-1", Project: "from-env"}
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("event %+v\nwant  %+v", ev, want)
	}
	if env.stdout.String() != "ok: backup-db complete\n" || env.stderr.Len() != 0 {
		t.Errorf("printed %q and %q", env.stdout, env.stderr)
	}

	// Flags may come first; the host defaults to this host's name; a
	// stream event needs no status.
	env.stdout.Reset()
	if err := runPingEnv(context.Background(), []string{"--event-type", "stream_event", "--state", "deploying", "deploys"}, env.ingestEnv); err != nil {
		t.Fatal(err)
	}
	if env.stdout.String() != "ok: deploys stream_event deploying\n" {
		t.Errorf("printed %q", env.stdout)
	}
	ev = srv.received()[1]
	if ev.Monitor != "deploys" || ev.EventType != "stream_event" || ev.State != "deploying" || ev.Status != "" ||
		ev.Host != "test-host" || ev.Duration != nil || ev.ExitCode != nil {
		t.Errorf("event %+v", ev)
	}
}

func TestPingRetries(t *testing.T) {
	unavailable := answer{status: 503, body: `{"status":"unavailable","reason":"no leader"}`}
	srv := newIngestServer(t, unavailable, unavailable)
	env := newTestEnv(srv.URL)
	if err := runPingEnv(context.Background(), []string{"nightly", "--status", "run"}, env.ingestEnv); err != nil {
		t.Fatal(err)
	}
	evs := srv.received()
	if len(evs) != 3 || evs[0].EventID == "" || !reflect.DeepEqual(evs[1], evs[0]) || !reflect.DeepEqual(evs[2], evs[0]) {
		t.Errorf("received %+v, want the same event three times", evs)
	}
	if got := env.clock.slept(); !reflect.DeepEqual(got, []time.Duration{500 * time.Millisecond, time.Second}) {
		t.Errorf("slept %v", got)
	}
	if env.stdout.String() != "ok: nightly run\n" || env.stderr.Len() != 0 {
		t.Errorf("printed %q and %q", env.stdout, env.stderr)
	}
}

func TestPingRetryAfter(t *testing.T) {
	srv := newIngestServer(t, answer{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":"rate_limited"}`})
	env := newTestEnv(srv.URL)
	if err := runPingEnv(context.Background(), []string{"nightly", "--status", "run", "--verbose"}, env.ingestEnv); err != nil {
		t.Fatal(err)
	}
	if got := env.clock.slept(); len(srv.received()) != 2 || !reflect.DeepEqual(got, []time.Duration{7 * time.Second}) {
		t.Errorf("%d requests, slept %v", len(srv.received()), got)
	}
	if env.stdout.String() != "ok: nightly run\n" {
		t.Errorf("printed %q", env.stdout)
	}
	// -v shows both attempts, the request and the answer with its
	// headers, and the retry in between.
	for _, want := range []string{"> POST " + srv.URL + "/ping\n> {\"event_type\":\"ping\",\"monitor\":\"nightly\"", "< 429 Too Many Requests\n", "< Retry-After: 7\n",
		"< {\"error\":\"rate_limited\"}\nlookout ping: HTTP 429: rate_limited; retrying in 7s\n", "< 200 OK\n"} {
		if !strings.Contains(env.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, env.stderr)
		}
	}
	if strings.Contains(env.stderr.String(), "ck_test") {
		t.Errorf("-v printed the key:\n%s", env.stderr)
	}
}

// A ping that created its monitor says so on stdout (on stderr with -q,
// which prints nothing else); -v shows the quota headers.
func TestPingCreated(t *testing.T) {
	createdAnswer := answer{status: 200, body: `{"status":"success","created":true}`, header: map[string]string{
		"X-Quota-State": "ok", "X-Quota-Used": "1", "X-Quota-Reset": "2026-04-01T00:00:00Z", "X-Quota-Reset-In": "2592000"}}
	srv := newIngestServer(t, createdAnswer, createdAnswer)
	env := newTestEnv(srv.URL)
	if err := runPingEnv(context.Background(), []string{"nightly-bakup", "--status", "complete", "-v"}, env.ingestEnv); err != nil {
		t.Fatal(err)
	}
	want := "ok: nightly-bakup complete\ncreated monitor nightly-bakup: a new name; was it mistyped? (lookout monitors list shows the account's monitors)\n"
	if env.stdout.String() != want {
		t.Errorf("stdout %q, want %q", env.stdout, want)
	}
	for _, h := range []string{"< X-Quota-State: ok\n", "< X-Quota-Used: 1\n", "< X-Quota-Reset: 2026-04-01T00:00:00Z\n", "< X-Quota-Reset-In: 2592000\n", `< {"status":"success","created":true}`} {
		if !strings.Contains(env.stderr.String(), h) {
			t.Errorf("stderr lacks %q:\n%s", h, env.stderr)
		}
	}
	env = newTestEnv(srv.URL)
	if err := runPingEnv(context.Background(), []string{"nightly-bakup", "--status", "complete", "-q"}, env.ingestEnv); err != nil {
		t.Fatal(err)
	}
	if env.stdout.Len() != 0 || !strings.Contains(env.stderr.String(), "created monitor nightly-bakup") {
		t.Errorf("-q printed %q and %q", env.stdout, env.stderr)
	}
}

func TestPingGivesUp(t *testing.T) {
	srv := newIngestServer(t)
	srv.answers = make([]answer, 100)
	for i := range srv.answers {
		srv.answers[i] = answer{status: 502, body: "bad gateway"}
	}
	env := newTestEnv(srv.URL)
	err := runPingEnv(context.Background(), []string{"nightly", "--status", "run", "--retry-for", "20s"}, env.ingestEnv)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 502 || ExitCode(err) != 1 {
		t.Fatalf("error %v", err)
	}
	// 0.5 + 1 + 2 + 4 + 8 = 15.5 s; waiting 10 s more would pass 20 s.
	if n := len(srv.received()); n != 6 || len(env.clock.slept()) != 5 {
		t.Errorf("%d attempts, slept %v", n, env.clock.slept())
	}
}

func TestPingRefused(t *testing.T) {
	for _, a := range []answer{
		{status: 400, body: `{"error":"invalid field: monitor"}`},
		{status: 401, body: `{"error":"unauthorized"}`},
		{status: 403, body: `{"status":"error","code":"monitor_limit_reached","message":"at the plan's limit of 5 monitors"}`},
	} {
		srv := newIngestServer(t, a)
		env := newTestEnv(srv.URL)
		err := runPingEnv(context.Background(), []string{"nightly", "--status", "run"}, env.ingestEnv)
		if err == nil || ExitCode(err) != 1 || len(srv.received()) != 1 || len(env.clock.slept()) != 0 {
			t.Errorf("HTTP %d: error %v after %d attempts", a.status, err, len(srv.received()))
		}
	}
}

func TestPingSuspended(t *testing.T) {
	srv := newIngestServer(t, answer{status: 200, header: map[string]string{"X-Quota-State": "suspended"},
		body: `{"status":"ok","quota":"suspended","resets_at":"2026-04-01T00:00:00Z","message":"quota used up"}`})
	env := newTestEnv(srv.URL)
	if err := runPingEnv(context.Background(), []string{"nightly", "--status", "run"}, env.ingestEnv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(env.stderr.String(), "suspended, resets 2026-04-01T00:00:00Z (quota used up)") {
		t.Errorf("stderr %q", env.stderr)
	}
}

func TestPingUsage(t *testing.T) {
	srv := newIngestServer(t)
	for _, args := range [][]string{
		{"nightly"},
		{"nightly", "--status", "done"},
		{"--status", "run"},
		{"a", "b", "--status", "run"},
		{"deploys", "--event-type", "stream_event"},
		{"nightly", "--status", "run", "--duration", "soon"},
	} {
		err := runPingEnv(context.Background(), args, newTestEnv(srv.URL).ingestEnv)
		if ExitCode(err) != 2 {
			t.Errorf("%q: error %v, want a usage error", args, err)
		}
	}
	env := newTestEnv(srv.URL)
	delete(env.vars, "LOOKOUT_INGEST_KEY")
	if err := runPingEnv(context.Background(), []string{"nightly", "--status", "run"}, env.ingestEnv); ExitCode(err) != 2 || !strings.Contains(err.Error(), "LOOKOUT_INGEST_KEY") {
		t.Errorf("no key: %v", err)
	}
	if err := runPingEnv(context.Background(), []string{"-h"}, env.ingestEnv); err != nil || !strings.Contains(env.stdout.String(), "-ingest-key") {
		t.Errorf("-h: %v, printed %q", err, env.stdout)
	}
	if n := len(srv.received()); n != 0 {
		t.Errorf("%d events sent", n)
	}
}
