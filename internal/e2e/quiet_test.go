package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lookout/internal/client"
)

// hooks is a real webhook receiver: every alert it gets, in order.
type hooks struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []map[string]any
	seen chan struct{}
}

func newHooks(t *testing.T) *hooks {
	h := &hooks{seen: make(chan struct{}, 1)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		h.mu.Lock()
		h.got = append(h.got, body)
		h.mu.Unlock()
		select {
		case h.seen <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// of lists the alerts of monitor name received so far, as "type".
func (h *hooks) of(name string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, b := range h.got {
		if m, _ := b["monitor"].(map[string]any); m["name"] == name {
			out = append(out, b["type"].(string))
		}
	}
	return out
}

// waitFor waits up to d for monitor name's alerts to be want.
func (h *hooks) waitFor(t *testing.T, name string, want []string, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); strings.Join(h.of(name), ",") != strings.Join(want, ","); {
		if time.Now().After(end) {
			t.Fatalf("alerts of %s: %v, want %v", name, h.of(name), want)
		}
		select {
		case <-h.seen:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// devNode is a dev node with the account's keys and a default webhook
// channel to h.
type devNode struct {
	base, mk   string
	manage     *client.Manage
	ingest     *client.Ingest
	proc       *proc
	accountID  string
	adminToken string
}

func startDev(t *testing.T, h *hooks, extra ...string) *devNode {
	t.Helper()
	args := append([]string{"control", "--dev", "--data-dir", t.TempDir(), "--http-addr", "127.0.0.1:0",
		"--raft-addr", "127.0.0.1:0", "--log-level", "warn"}, extra...)
	p := start(t, "dev", args...)
	out := p.waitStdout("Next:", 30*time.Second)
	d := &devNode{base: match(t, out, `is up at (http://[0-9.:]+)`), accountID: match(t, out, `account id:\s+(\S+)`),
		mk: match(t, out, `management key:\s+(mk_\S+)`), adminToken: match(t, out, `admin token:\s+(adm_[a-z0-9]+)`), proc: p}
	d.manage = client.NewManage(d.base, d.mk, nil)
	d.ingest = client.NewIngest(d.base, match(t, out, `ingest key:\s+(ck_\S+)`), nil)
	def := true
	cfg, _ := json.Marshal(map[string]string{"url": h.srv.URL})
	if _, err := client.NewAdmin(d.base, d.adminToken, nil).CreateChannel(ctxT(t, time.Minute), d.accountID,
		client.CreateChannelRequest{Type: "webhook", Name: "hook", Config: cfg, Default: &def}); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPausedMonitorsTimeoutRaisesNothing: on a dev node with a real
// webhook receiver, a paused ping monitor's run passes its one-second
// timeout and nothing is sent; resumed, its timeout counts from the
// resume, and then monitor.timeout is sent once.
func TestPausedMonitorsTimeoutRaisesNothing(t *testing.T) {
	t.Parallel()
	h := newHooks(t)
	d := startDev(t, h)
	ctx := ctxT(t, time.Minute)
	m, err := d.manage.CreateMonitorJSON(ctx, []byte(`{"manifest_version":1,"kind":"ping","name":"deploy","timeout_seconds":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.manage.PauseMonitor(ctx, m.UUID, time.Time{}, "deploying"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ingest.Ping(ctx, client.Event{EventType: "ping", Monitor: "deploy", Status: "run"}); err != nil {
		t.Fatal(err)
	}
	// The run times out a second later; the engine fires within one more.
	time.Sleep(3 * time.Second)
	if got := h.of("deploy"); len(got) != 0 {
		t.Fatalf("a paused monitor alerted: %v", got)
	}
	st, err := d.manage.ResumeMonitor(ctx, m.UUID)
	if err != nil || st.Status.State != "down" {
		t.Fatalf("resume: %+v %v", st, err)
	}
	h.waitFor(t, "deploy", []string{"monitor.timeout"}, 10*time.Second)
	time.Sleep(time.Second)
	h.waitFor(t, "deploy", []string{"monitor.timeout"}, 0)
}

// TestWindowHoldsAFailingCheckUntilItsEnd: on a dev node with a real
// webhook receiver, two checks fail at once against a local target; the
// one a maintenance window matches (by tag) sends nothing while the window
// lasts and check.failed once when it ends; the other alerts at once.
func TestWindowHoldsAFailingCheckUntilItsEnd(t *testing.T) {
	t.Parallel()
	h := newHooks(t)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	defer target.Close()
	d := startDev(t, h)
	ctx := ctxT(t, time.Minute)
	now := time.Now().UTC()
	end := now.Add(12 * time.Second).Truncate(time.Second) // as RFC 3339 carries it
	body := `{"name":"database move","starts_at":"` + now.Add(-time.Minute).Format(time.RFC3339) + `","ends_at":"` + end.Format(time.RFC3339) + `","match":{"tags":["db"]}}`
	if code, answer := post(t, d.base+"/api/v1/maintenance-windows", "Bearer "+d.mk, body); code != http.StatusCreated {
		t.Fatalf("create window: %d %s", code, answer)
	}
	for _, name := range []string{"db-check", "web-check"} {
		tag := strings.TrimSuffix(name, "-check")
		if _, err := d.manage.CreateMonitorJSON(ctx, []byte(`{"manifest_version":1,"kind":"http_check","name":"`+name+`","tags":["`+tag+`"],"schedule":"1h",
			"config":{"url":"`+target.URL+`","expected_status":200}}`)); err != nil {
			t.Fatal(err)
		}
	}
	h.waitFor(t, "web-check", []string{"check.failed"}, 15*time.Second)
	if got := h.of("db-check"); len(got) != 0 && time.Now().Before(end) {
		t.Fatalf("the check in the window alerted before its end: %v", got)
	}
	h.waitFor(t, "db-check", []string{"check.failed"}, time.Until(end)+10*time.Second)
	if time.Now().Before(end) {
		t.Fatal("the held alert came before the window's end")
	}
	time.Sleep(time.Second)
	h.waitFor(t, "db-check", []string{"check.failed"}, 0)
	h.waitFor(t, "web-check", []string{"check.failed"}, 0)
}

// post sends body with auth and returns the status and the answer.
func post(t *testing.T, url, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestFailureThresholdAlertsOnTheSecondSlot: on a dev node with a real
// webhook receiver, a check with failure_threshold 2 against a target that
// answers 404 alerts nothing after its first failed slot and check.failed
// once after its second (the schedule's shortest interval, 30 s, apart).
func TestFailureThresholdAlertsOnTheSecondSlot(t *testing.T) {
	t.Parallel()
	h := newHooks(t)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	defer target.Close()
	d := startDev(t, h)
	ctx := ctxT(t, 2*time.Minute)
	m, err := d.manage.CreateMonitorJSON(ctx, []byte(`{"manifest_version":1,"kind":"http_check","name":"flaky","schedule":"30s","failure_threshold":2,
		"config":{"url":"`+target.URL+`","expected_status":200}}`))
	if err != nil {
		t.Fatal(err)
	}
	failed := func() int {
		code, body := get(t, d.base+"/api/v1/monitors/"+m.UUID+"/executions", "Bearer "+d.mk)
		if code != http.StatusOK {
			t.Fatalf("executions: %d %s", code, body)
		}
		return strings.Count(body, `"status":"failed"`)
	}
	for end := time.Now().Add(20 * time.Second); failed() < 1; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("no first execution")
		}
	}
	time.Sleep(time.Second) // what a first failure would have sent, it has sent by now
	// A created check runs at once, then on its schedule, whose next slot
	// may come a moment later: an alert is wrong only while one slot has
	// failed. The alerts are read before the executions, as the second
	// slot's alert follows its record.
	if got := h.of("flaky"); len(got) != 0 {
		if n := failed(); n < 2 {
			t.Fatalf("alerted after %d failed slot: %v", n, got)
		}
		t.Log("the second slot came within a second of the first; the alert followed it")
	}
	h.waitFor(t, "flaky", []string{"check.failed"}, 45*time.Second)
	if n := failed(); n != 2 {
		t.Fatalf("alerted after %d failed slots, want 2", n)
	}
}

// TestDependentHeldUntilItsDependencyRecovers: on a dev node with a real
// webhook receiver, a ping monitor depending on a failing check fails
// quietly (status held_by the check); when the check recovers, the
// dependent, still failing, alerts once. Unknown dependencies and cycles
// are refused with their codes.
func TestDependentHeldUntilItsDependencyRecovers(t *testing.T) {
	t.Parallel()
	h := newHooks(t)
	var status atomic.Int32
	status.Store(http.StatusNotFound)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(int(status.Load())) }))
	defer target.Close()
	d := startDev(t, h)
	ctx := ctxT(t, 2*time.Minute)
	db, err := d.manage.CreateMonitorJSON(ctx, []byte(`{"manifest_version":1,"kind":"http_check","name":"db","schedule":"30s",
		"config":{"url":"`+target.URL+`","expected_status":200}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, code string }{
		{`{"manifest_version":1,"kind":"ping","name":"app","timeout_seconds":60,"depends_on":[{"kind":"http_check","name":"dbx"}]}`, "dependency_invalid"},
		{`{"manifest_version":1,"kind":"ping","name":"app","timeout_seconds":60,"depends_on":[{"kind":"ping","name":"app"}]}`, "dependency_cycle"},
	} {
		if code, answer := post(t, d.base+"/api/v1/monitors", "Bearer "+d.mk, tc.body); code != 422 || !strings.Contains(answer, tc.code) {
			t.Fatalf("%s: %d %s", tc.body, code, answer)
		}
	}
	app, err := d.manage.CreateMonitorJSON(ctx, []byte(`{"manifest_version":1,"kind":"ping","name":"app","timeout_seconds":60,
		"depends_on":[{"kind":"http_check","name":"db"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "db", []string{"check.failed"}, 20*time.Second)
	if _, err := d.ingest.Ping(ctx, client.Event{EventType: "ping", Monitor: "app", Status: "fail"}); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, d.base+"/api/v1/monitors/"+app.UUID, "Bearer "+d.mk)
	if code != http.StatusOK || !strings.Contains(body, `"held_by":{"uuid":"`+db.UUID+`","kind":"http_check","name":"db"}`) {
		t.Fatalf("app's status: %d %s", code, body)
	}
	time.Sleep(time.Second)
	if got := h.of("app"); len(got) != 0 {
		t.Fatalf("the dependent alerted while its dependency is down: %v", got)
	}
	status.Store(http.StatusOK)
	h.waitFor(t, "db", []string{"check.failed", "check.recovered"}, 45*time.Second)
	h.waitFor(t, "app", []string{"monitor.failed"}, 10*time.Second)
	time.Sleep(time.Second)
	h.waitFor(t, "app", []string{"monitor.failed"}, 0)
}
