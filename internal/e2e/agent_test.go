package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"lookout/internal/client"
)

// agentSetup is a dev control node with an account whose plan lets a test
// ping fast, and an agent token of one region.
type agentSetup struct {
	controlArgs []string
	controlURL  string
	control     *proc
	admin       *client.Admin
	account     *client.CreatedAccount
	mgmt        *client.Manage
}

// startControl runs a dev control node on fixed addresses (so that an agent
// finds it again after a restart) and creates an account without ingest
// limits to speak of.
func startControl(t *testing.T, extra ...string) *agentSetup {
	t.Helper()
	s := &agentSetup{}
	httpAddr := freeAddr(t)
	s.controlURL = "http://" + httpAddr
	s.controlArgs = append([]string{"control", "--dev", "--data-dir", t.TempDir(), "--http-addr", httpAddr,
		"--raft-addr", freeAddr(t), "--log-level", "warn"}, extra...)
	s.control = start(t, "control", s.controlArgs...)
	out := s.control.waitStdout("Next:", 60*time.Second)
	s.admin = client.NewAdmin(s.controlURL, match(t, out, `admin token:\s+(adm_[a-z0-9]+)`), nil)
	rate, burst := 100000.0, int64(100000)
	acct, err := s.admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{
		Email: "agent-user@example.com",
		Plan:  &client.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.account = acct
	s.mgmt = client.NewManage(s.controlURL, acct.ManagementKey, nil)
	return s
}

// agentProc is one lookout agent process and the arguments to restart it.
type agentProc struct {
	name string
	args []string
	url  string // its local Ingest API
	proc *proc
}

// startAgent runs lookout agent against s's control node, with a token
// of its own that serves every account.
func (s *agentSetup) startAgent(t *testing.T, name, region string, extra ...string) *agentProc {
	t.Helper()
	return s.startAgentOf(t, name, region, nil, extra...)
}

// startAgentOf runs lookout agent with a token of its own that serves
// accounts (none: every account).
func (s *agentSetup) startAgentOf(t *testing.T, name, region string, accounts []string, extra ...string) *agentProc {
	t.Helper()
	tok, err := s.admin.CreateAgentToken(ctxT(t, 20*time.Second), client.CreateAgentTokenRequest{Region: region, Name: name, Accounts: accounts})
	if err != nil {
		t.Fatal(err)
	}
	return s.startAgentWith(t, name, region, tok.Token, extra...)
}

// startAgentWith runs lookout agent with the agent token secret token.
func (s *agentSetup) startAgentWith(t *testing.T, name, region, token string, extra ...string) *agentProc {
	t.Helper()
	addr := freeAddr(t)
	a := &agentProc{name: name, url: "http://" + addr, args: append([]string{"agent", "--control", s.controlURL,
		"--token", token, "--region", region, "--name", name, "--data-dir", filepath.Join(t.TempDir(), name),
		"--http-addr", addr, "--log-level", "warn"}, extra...)}
	a.proc = start(t, name, a.args...)
	return a
}

// restart starts the agent again on the same data directory.
func (a *agentProc) restart(t *testing.T) {
	a.proc = start(t, a.name+"-again", a.args...)
}

// pingUntil sends ev to url until the answer is 200 success, for as long
// as ctx allows: an agent that is starting, or has no keys yet, answers
// with a connection error, 401 or 503 first.
func pingUntil(ctx context.Context, url, key string, ev client.Event) error {
	in := client.NewIngest(url, key, &http.Client{Timeout: 5 * time.Second})
	for {
		res, err := in.Ping(ctx, ev)
		if err == nil && res.Status == "success" {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("answer %q", res.Status)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ping %s: %w (last: %v)", ev.EventID, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestAgentKeepsEveryAcknowledgedPingThroughKills sends 1,000 pings to an
// agent while its control node is killed, the agent itself is killed and
// restarted half way (while the control node is still down: it must come
// back with its keys from disk), and the control node comes back; then
// every acknowledged ping is stored exactly once.
func TestAgentKeepsEveryAcknowledgedPingThroughKills(t *testing.T) {
	t.Parallel()
	s := startControl(t)
	a := s.startAgent(t, "edge-1", "site-a")
	key := s.account.IngestKey
	ctx := ctxT(t, 4*time.Minute)
	if err := pingUntil(ctxT(t, 60*time.Second), a.url, key, client.Event{EventType: "ping", Monitor: "warmup", Status: "complete", EventID: "warmup"}); err != nil {
		t.Fatalf("the agent never accepted a ping: %v", err)
	}

	const total, monitors = 1000, 10
	acked := map[string]bool{}
	for i := range total {
		switch i {
		case 200:
			s.control.kill()
		case 500:
			a.proc.kill()
			a.restart(t)
		case 800:
			s.control = start(t, "control-again", s.controlArgs...)
		}
		msg := fmt.Sprintf("p-%04d", i)
		// The same event_id on every retry: a ping answered by a dying
		// agent may be buffered already.
		ev := client.Event{EventType: "ping", Monitor: fmt.Sprintf("job-%d", i%monitors), Status: "complete", Message: msg, EventID: msg}
		if err := pingUntil(ctx, a.url, key, ev); err != nil {
			t.Fatal(err)
		}
		acked[msg] = true
	}

	// Drain: every acknowledged ping reaches the control plane once.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		seen, dup, err := storedMessages(ctx, s.mgmt)
		if err == nil && dup != "" {
			t.Fatalf("ping %s is stored twice", dup)
		}
		missing := 0
		for m := range acked {
			if seen[m] == 0 {
				missing++
			}
		}
		if err == nil && missing == 0 {
			if len(seen) != total {
				t.Fatalf("%d distinct pings stored, %d sent", len(seen), total)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the agent drained: %d of %d acknowledged pings are not stored (last error: %v)", missing, total, err)
		}
		time.Sleep(time.Second)
	}
}

// storedMessages counts the stored events of every ping monitor by
// message, and names one stored twice.
func storedMessages(ctx context.Context, m *client.Manage) (map[string]int, string, error) {
	mons, err := m.AllMonitors(ctx, "ping")
	if err != nil {
		return nil, "", err
	}
	seen := map[string]int{}
	for _, mon := range mons {
		if mon.Name == "warmup" {
			continue
		}
		evs, err := m.Events(ctx, mon.UUID, 1000)
		if err != nil {
			return nil, "", err
		}
		for _, ev := range evs {
			seen[ev.Message]++
			if seen[ev.Message] > 1 {
				return seen, ev.Message, nil
			}
		}
	}
	return seen, "", nil
}

// execution is the part of an execution this file reads.
type execution struct {
	Region string    `json:"region"`
	Agent  string    `json:"agent"`
	Slot   time.Time `json:"slot"`
	Status string    `json:"status"`
}

// executions lists a check's newest executions.
func executions(ctx context.Context, base, key, uuid string) ([]execution, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/monitors/"+uuid+"/executions?limit=100", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("executions: %s", resp.Status)
	}
	var out struct {
		Executions []execution `json:"executions"`
	}
	return out.Executions, json.NewDecoder(resp.Body).Decode(&out)
}

// TestRegionMovesChecksOffADeadAgent runs two agents of one region that
// meet over gossip and a 30 s http_check of that region: when the agent
// that runs it is killed, the other runs every slot from 15 s after the
// kill on.
func TestRegionMovesChecksOffADeadAgent(t *testing.T) {
	t.Parallel()
	var hits sync.Map
	target := &http.Server{Addr: freeAddr(t), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(time.Now().UnixNano(), r.Header.Get("User-Agent"))
		w.Write([]byte("OK"))
	})}
	go target.ListenAndServe()
	t.Cleanup(func() { target.Close() })

	s := startControl(t)
	g1, g2 := freeAddr(t), freeAddr(t)
	a1 := s.startAgent(t, "edge-1", "site-a", "--gossip-addr", g1)
	a2 := s.startAgent(t, "edge-2", "site-a", "--gossip-addr", g2, "--join", g1)
	agents := map[string]*agentProc{"edge-1": a1, "edge-2": a2}

	raw := fmt.Sprintf(`{"manifest_version":1,"kind":"http_check","name":"site-a-web","schedule":"30s","regions":["site-a"],
		"config":{"url":"http://%s/","method":"GET","timeout":5,"expected_status":200,"expected_content":"OK"}}`, target.Addr)
	mon, err := s.mgmt.CreateMonitorJSON(ctxT(t, 20*time.Second), json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 4*time.Minute)

	// The first execution (within seconds of the creation) names its agent.
	var first execution
	for first.Agent == "" {
		exs, err := executions(ctx, s.controlURL, s.account.ManagementKey, mon.UUID)
		if err == nil && len(exs) > 0 && exs[0].Status == "success" {
			first = exs[0]
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no execution of the check by an agent: %v %v", exs, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if first.Region != "site-a" || agents[first.Agent] == nil {
		t.Fatalf("first execution %+v: want region site-a and one of the agents", first)
	}
	killed := time.Now()
	agents[first.Agent].proc.kill()
	other := "edge-1"
	if first.Agent == "edge-1" {
		other = "edge-2"
	}

	// Every 30 s slot from kill+15 s on is run by the survivor. Wait for
	// the first slot after that point and one more.
	for {
		exs, err := executions(ctx, s.controlURL, s.account.ManagementKey, mon.UUID)
		var after []execution
		for _, ex := range exs {
			if ex.Slot.After(killed.Add(15*time.Second)) && (ex.Status == "success" || ex.Status == "failed") {
				after = append(after, ex)
			}
		}
		if err == nil && len(after) >= 2 {
			for _, ex := range after {
				if ex.Agent != other || ex.Status != "success" {
					t.Fatalf("slot %s after the kill ran on %q with %s, want %s success", ex.Slot, ex.Agent, ex.Status, other)
				}
			}
			// Consecutive slots: none missed.
			if d := after[0].Slot.Sub(after[1].Slot); d != 30*time.Second {
				t.Fatalf("slots %s and %s are %s apart: a slot was missed", after[1].Slot, after[0].Slot, d)
			}
			if first := after[len(after)-1].Slot; first.Sub(killed) > 15*time.Second+30*time.Second {
				t.Fatalf("the survivor's first slot %s is more than one period after kill+15s (%s)", first, killed)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the survivor did not take the check over: %+v %v", exs, err)
		}
		time.Sleep(time.Second)
	}
}

// TestAgentOfflineAlertsOnceAndComesBack cuts a region off (its only agent
// dies): one agent.offline webhook, the region's check goes unknown, and a
// run started through the region, whose timeout passes while the region is
// offline, raises no monitor.timeout then; the agent returns: one
// agent.online, and the run, judged again from its own time, times out
// once.
func TestAgentOfflineAlertsOnceAndComesBack(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var types []string
	hook := &http.Server{Addr: freeAddr(t), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Type string `json:"type"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		types = append(types, body.Type)
		mu.Unlock()
	})}
	go hook.ListenAndServe()
	t.Cleanup(func() { hook.Close() })
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), types...)
	}
	count := func(want string) int {
		n := 0
		for _, typ := range seen() {
			if typ == want {
				n++
			}
		}
		return n
	}

	s := startControl(t, "--agent-offline-after", "10s")
	ctx := ctxT(t, 3*time.Minute)
	def := true
	if _, err := s.admin.CreateChannel(ctx, s.account.ID, client.CreateChannelRequest{
		Type: "webhook", Name: "hook", Default: &def,
		Config: json.RawMessage(fmt.Sprintf(`{"url":"http://%s/hook"}`, hook.Addr)),
	}); err != nil {
		t.Fatal(err)
	}
	target := &http.Server{Addr: freeAddr(t), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go target.ListenAndServe()
	t.Cleanup(func() { target.Close() })
	a := s.startAgent(t, "edge-1", "site-b")
	raw := fmt.Sprintf(`{"manifest_version":1,"kind":"http_check","name":"site-b-web","schedule":"30s","regions":["site-b"],
		"config":{"url":"http://%s/","method":"GET","timeout":2,"expected_status":200}}`, target.Addr)
	mon, err := s.mgmt.CreateMonitorJSON(ctx, json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := pingUntil(ctx, a.url, s.account.IngestKey, client.Event{EventType: "ping", Monitor: "site-b-job", Status: "complete", EventID: "first"}); err != nil {
		t.Fatal(err)
	}
	// Two reads a second: the Management API allows a key 60 a minute
	// and one a second after that, and a loaded machine may take a while.
	waitState := func(uuid, want, what string) {
		t.Helper()
		for checkState(ctx, s, uuid) != want {
			if ctx.Err() != nil {
				t.Fatalf("%s never came (state %q, want %q)", what, checkState(ctxT(t, 5*time.Second), s, uuid), want)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	waitWebhook := func(typ string) {
		t.Helper()
		for count(typ) == 0 {
			if ctx.Err() != nil {
				t.Fatalf("no %s webhook; got %v", typ, seen())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitState(mon.UUID, "up", "the check's first verdict through the agent")
	// A run through the region, with a timeout that passes while the
	// region is offline.
	const runTimeout = 20 * time.Second
	run, err := s.mgmt.CreateMonitorJSON(ctx, json.RawMessage(fmt.Sprintf(
		`{"manifest_version":1,"kind":"ping","name":"site-b-run","timeout_seconds":%d}`, int(runTimeout.Seconds()))))
	if err != nil {
		t.Fatal(err)
	}
	if err := pingUntil(ctx, a.url, s.account.IngestKey, client.Event{EventType: "ping", Monitor: "site-b-run", Status: "run", EventID: "run-1"}); err != nil {
		t.Fatal(err)
	}
	waitState(run.UUID, "running", "the run on the control node")
	runStarted := time.Now()
	a.proc.kill()
	waitWebhook("agent.offline")
	if st := checkState(ctx, s, mon.UUID); st != "unknown" {
		t.Fatalf("the offline region's check is %q, want unknown", st)
	}
	if st := checkState(ctx, s, run.UUID); st != "unknown" {
		t.Fatalf("the offline region's run is %q, want unknown", st)
	}
	// A second agent.offline would come now, and the run's timeout passes.
	time.Sleep(max(10*time.Second, runTimeout+5*time.Second-time.Since(runStarted)))
	if n := count("agent.offline"); n != 1 {
		t.Fatalf("%d agent.offline webhooks, want 1: %v", n, seen())
	}
	for _, typ := range seen() {
		if regexp.MustCompile(`check\.failed|monitor\.(missed|timeout)`).MatchString(typ) {
			t.Fatalf("a %s alert came while the region was offline: %v", typ, seen())
		}
	}
	a.restart(t)
	waitWebhook("agent.online")
	waitWebhook("monitor.timeout") // the run timed out while the region was offline
	if os.Getenv("LOOKOUT_E2E_VERBOSE") != "" {
		t.Logf("webhooks: %v", seen())
	}
	// A control node with an agent's stream open stops cleanly and at once.
	if err := s.control.stop(); err != nil {
		t.Fatal(err)
	}
}

// checkState reads a check's status.state from the Management API, ""
// when it cannot.
func checkState(ctx context.Context, s *agentSetup, uuid string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.controlURL+"/api/v1/monitors/"+uuid, nil)
	req.Header.Set("Authorization", "Bearer "+s.account.ManagementKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var out struct {
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	json.NewDecoder(resp.Body).Decode(&out)
	return out.Status.State
}
