package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"lookout/internal/client"
)

// controlNodes are the control plane's services; each runs with its
// service name as --node-id, so a leader's id names its container.
var controlNodes = []string{"n1", "n2", "n3"}

// world is the running project as the test sees it.
type world struct {
	r    *run
	http *http.Client

	nodeMu  sync.Mutex
	nodeURL map[string]string // control service -> http://IP:8080
	control endpoints         // the control nodes, for clients

	ingestKey, manageKey string
	agentEU, agentUS     endpoints
	checkUUID            string
	killed               string // the control service docker kill stopped
}

// client is the HTTP client of the pings and the Management API: one
// connection per request, as `lookout ping` makes one per event, so that a
// killed node costs a client a refused or timed-out dial (2 s), not a
// request hanging on a dead pooled connection.
func (w *world) client() *http.Client {
	if w.http == nil {
		w.http = w.newClient(10 * time.Second)
	}
	return w.http
}

// newClient is an HTTP client that trusts the deployment's CA (with -tls;
// every node certificate names "lookout" too, since the test dials IPs).
func (w *world) newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext:       (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			DisableKeepAlives: true,
			TLSClientConfig:   w.r.tlsConf,
		},
	}
}

// resolve finds the control nodes' addresses (again after a restart).
func (w *world) resolve(ctx context.Context) error {
	w.nodeMu.Lock()
	defer w.nodeMu.Unlock()
	if w.nodeURL == nil {
		w.nodeURL = map[string]string{}
	}
	var urls []string
	for _, n := range controlNodes {
		ip, err := w.r.c.ip(ctx, n, "control")
		if err != nil {
			return err
		}
		w.nodeURL[n] = w.r.scheme() + "://" + ip + ":8080"
		urls = append(urls, w.nodeURL[n])
	}
	w.control.set(urls...)
	return nil
}

func (w *world) url(node string) string {
	w.nodeMu.Lock()
	defer w.nodeMu.Unlock()
	return w.nodeURL[node]
}

func (w *world) admin(node string) *client.Admin {
	return client.NewAdmin(w.url(node), w.r.token, w.newClient(3*time.Second))
}

// live are the control nodes not killed.
func (w *world) live() []string {
	var out []string
	for _, n := range controlNodes {
		if n != w.killed {
			out = append(out, n)
		}
	}
	return out
}

// manage calls f with a Management API client of each live node in turn
// until one succeeds.
func (w *world) manage(f func(*client.Manage) error) error {
	var err error
	for _, n := range w.live() {
		if err = f(client.NewManage(w.url(n), w.manageKey, w.client())); err == nil {
			return nil
		}
	}
	return err
}

func (w *world) up(ctx context.Context) (string, error) {
	if _, err := w.r.c.run(ctx, "up", "-d", "n1", "n2", "n3", "target"); err != nil {
		return "", err
	}
	return "project " + w.r.cfg.project, w.resolve(ctx)
}

// healthy is nil when node's /health answers 200.
func (w *world) healthy(ctx context.Context, node string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.url(node)+"/health", nil)
	resp, err := w.newClient(3 * time.Second).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s /health: %d %s", node, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}

// settled is nil when node sees a leader and three voters, none gone,
// and every live node is healthy.
func (w *world) settled(ctx context.Context, node string) (string, error) {
	st, err := w.admin(node).ClusterStatus(ctx)
	if err != nil {
		return "", err
	}
	if st.Leader == "" {
		return "", fmt.Errorf("%s sees no leader", node)
	}
	voters := 0
	for _, n := range st.Nodes {
		if n.Voter && n.Role != "gone" {
			voters++
		}
	}
	if voters != 3 {
		return "", fmt.Errorf("%s sees %d live voters, want 3", node, voters)
	}
	for _, n := range w.live() {
		if err := w.healthy(ctx, n); err != nil {
			return "", err
		}
	}
	return st.Leader, nil
}

func (w *world) waitLeader(ctx context.Context) (string, error) {
	var leader string
	err := waitFor(ctx, 2*time.Minute, 500*time.Millisecond, "cluster of 3 with a leader", func() (err error) {
		for _, n := range controlNodes {
			if leader, err = w.settled(ctx, n); err != nil {
				return err
			}
		}
		return nil
	})
	return "leader " + leader, err
}

func (w *world) setup(ctx context.Context) (string, error) {
	rate, burst, perMinute := 1000.0, int64(2000), int64(1000)
	acct, err := w.admin("n1").CreateAccount(ctx, client.CreateAccountRequest{
		Email: "deploytest@example.com",
		// The contract's default of 10 pings a second per key and node
		// would only slow the test down (clients retry 429).
		Plan: &client.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst, MonitorsCreatedPerMinute: &perMinute},
	})
	if err != nil {
		return "", fmt.Errorf("create account: %w", err)
	}
	w.ingestKey, w.manageKey = acct.IngestKey, acct.ManagementKey
	for _, region := range []string{"eu", "us"} {
		tok, err := w.admin("n1").CreateAgentToken(ctx, client.CreateAgentTokenRequest{Region: region, Name: "agent-" + region})
		if err != nil {
			return "", fmt.Errorf("create agent token for %s: %w", region, err)
		}
		w.r.c.env = append(w.r.c.env, "LOOKOUT_AGENT_TOKEN_"+strings.ToUpper(region)+"="+tok.Token)
	}
	return "account " + acct.ID + ", agent tokens for eu and us", nil
}

func (w *world) sender(retryFor time.Duration) *sender {
	return &sender{key: w.ingestKey, http: w.client(), retryFor: retryFor}
}

// all sends n events to one monitor through to and wants every one
// acknowledged.
func (w *world) all(ctx context.Context, s *sender, to *endpoints, phase, monitor string, n int) error {
	for range n {
		if ev := s.send(ctx, w.r.l, to, phase, monitor); !ev.acked {
			return fmt.Errorf("%s not acknowledged after %d attempts: %v", ev.id, ev.attempts, ev.err)
		}
	}
	return nil
}

func (w *world) pingControl(ctx context.Context) (string, error) {
	if err := w.all(ctx, w.sender(30*time.Second), &w.control, "control", "dt-control", 30); err != nil {
		return "", err
	}
	return "30 pings over n1, n2, n3, all acknowledged", nil
}

func (w *world) agentsUp(ctx context.Context) (string, error) {
	if _, err := w.r.c.run(ctx, "up", "-d", "--no-deps", "agent-eu", "agent-us"); err != nil {
		return "", err
	}
	for _, a := range []struct {
		svc, net string
		to       *endpoints
	}{{"agent-eu", "eu", &w.agentEU}, {"agent-us", "us", &w.agentUS}} {
		ip, err := w.r.c.ip(ctx, a.svc, a.net)
		if err != nil {
			return "", err
		}
		a.to.set("http://" + ip + ":8090")
		// The first ping waits for the agent to start, connect and
		// receive the account's key hashes (it refuses the key until
		// then).
		warm := w.sender(90 * time.Second)
		warm.retry401 = true
		if ev := warm.send(ctx, w.r.l, a.to, "agent", "dt-"+a.svc); !ev.acked {
			return "", fmt.Errorf("%s: first ping not acknowledged within 90 s (%d attempts): %v", a.svc, ev.attempts, ev.err)
		}
		if err := w.all(ctx, w.sender(30*time.Second), a.to, "agent", "dt-"+a.svc, 20); err != nil {
			return "", fmt.Errorf("%s: %w", a.svc, err)
		}
	}
	// A check for the agents of both regions, on the target only they
	// reach.
	check := json.RawMessage(`{"manifest_version": 1, "kind": "http_check", "name": "dt-target", "schedule": "1m",
		"regions": ["eu", "us"], "config": {"url": "http://target:8081/", "method": "GET", "timeout": 5, "expected_status": 200}}`)
	if err := w.manage(func(m *client.Manage) error {
		mf, err := m.CreateMonitorJSON(ctx, check)
		if err == nil {
			w.checkUUID = mf.UUID
		}
		return err
	}); err != nil {
		return "", fmt.Errorf("create the regional check: %w", err)
	}
	return "21 pings through each agent acknowledged; http_check dt-target in regions eu, us", nil
}

func (w *world) leader(ctx context.Context) (string, error) {
	var last error
	for _, n := range w.live() {
		st, err := w.admin(n).ClusterStatus(ctx)
		if err == nil && st.Leader != "" {
			return st.Leader, nil
		}
		last = err
	}
	return "", fmt.Errorf("no node knows a leader (last error: %v)", last)
}

func (w *world) killLeader(ctx context.Context) (string, error) {
	old, err := w.leader(ctx)
	if err != nil {
		return "", err
	}
	if !contains(controlNodes, old) {
		return "", fmt.Errorf("leader %q is not one of %v", old, controlNodes)
	}
	// Clients keep pinging throughout, one event at a time each, retrying
	// like `lookout ping` (60 s) over the three nodes.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	worker := func(to *endpoints, monitor string) {
		defer wg.Done()
		s := w.sender(60 * time.Second)
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			default:
			}
			s.send(ctx, w.r.l, to, "kill", monitor)
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := 1; i <= 3; i++ {
		wg.Add(1)
		go worker(&w.control, fmt.Sprintf("dt-kill-%d", i))
	}
	if w.r.agents {
		wg.Add(1)
		go worker(&w.agentUS, "dt-kill-agent-us")
	}
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wg.Wait()
		}
	}()
	time.Sleep(2 * time.Second)

	id, err := w.r.c.container(ctx, old)
	if err != nil {
		return "", err
	}
	if _, err := w.r.c.docker(ctx, "kill", id); err != nil {
		return "", err
	}
	killedAt := time.Now()
	w.killed = old
	var next string
	if err := waitFor(ctx, time.Minute, 200*time.Millisecond, "a new leader", func() (err error) {
		if next, err = w.leader(ctx); err == nil && next == old {
			err = fmt.Errorf("%s still seen as leader", old)
		}
		return err
	}); err != nil {
		return "", err
	}
	elected := time.Since(killedAt)
	time.Sleep(10 * time.Second)
	close(stop)
	wg.Wait()
	stopped = true

	var sentN, ackedN, afterKill int
	var firstLost *sent
	var slowest time.Duration
	slowestAttempts := 0
	for _, ev := range w.r.l.snapshot() {
		if ev.phase != "kill" {
			continue
		}
		sentN++
		switch {
		case ev.acked:
			ackedN++
			if d := ev.done.Sub(ev.at); d > slowest {
				slowest, slowestAttempts = d, ev.attempts
			}
			if ev.at.After(killedAt) {
				afterKill++
			}
		case firstLost == nil:
			e := ev
			firstLost = &e
		}
	}
	note := fmt.Sprintf("killed %s; %s leader %s after it; %d pings sent, %d acknowledged (%d sent after the kill; slowest %s, %d attempts)",
		old, next, elected.Round(100*time.Millisecond), sentN, ackedN, afterKill, slowest.Round(100*time.Millisecond), slowestAttempts)
	w.r.facts = append(w.r.facts, "leader kill: "+note)
	if firstLost != nil {
		return note, fmt.Errorf("%d pings not acknowledged within 60 s, e.g. %s after %d attempts: %v", sentN-ackedN, firstLost.id, firstLost.attempts, firstLost.err)
	}
	if afterKill == 0 {
		return note, errors.New("no ping sent after the kill was acknowledged")
	}
	return note, nil
}

func (w *world) restartKilled(ctx context.Context) (string, error) {
	node := w.killed
	if _, err := w.r.c.run(ctx, "start", node); err != nil {
		return "", err
	}
	start := time.Now()
	if err := w.resolve(ctx); err != nil {
		return "", err
	}
	w.killed = ""
	err := waitFor(ctx, 2*time.Minute, 500*time.Millisecond, node+" back in the cluster", func() error {
		_, err := w.settled(ctx, node)
		return err
	})
	return fmt.Sprintf("%s healthy and caught up after %s", node, time.Since(start).Round(100*time.Millisecond)), err
}

func (w *world) cutRegion(ctx context.Context) (string, error) {
	id, err := w.r.c.container(ctx, "agent-eu")
	if err != nil {
		return "", err
	}
	if _, err := w.r.c.docker(ctx, "network", "disconnect", w.r.c.network("control"), id); err != nil {
		return "", err
	}
	// The agent answers from its disk buffer: only its own network can
	// fail, so retries are short.
	if err := w.all(ctx, w.sender(10*time.Second), &w.agentEU, "cut", "dt-cut-eu", 30); err != nil {
		return "", fmt.Errorf("agent-eu cut off: %w", err)
	}
	// None of them may reach the control plane while the region is cut
	// off (else the cut is not real and the test proves nothing).
	time.Sleep(3 * time.Second)
	leaked := 0
	if err := w.manage(func(m *client.Manage) error {
		mons, err := m.AllMonitors(ctx, "ping")
		if err != nil {
			return err
		}
		for _, mf := range mons {
			if mf.Name == "dt-cut-eu" {
				evs, err := m.Events(ctx, mf.UUID, 1000)
				if err != nil {
					return err
				}
				leaked = len(evs)
			}
		}
		return nil
	}); err != nil {
		return "", err
	}
	if leaked > 0 {
		return "", fmt.Errorf("%d pings to the cut-off agent reached the control plane: the region was not cut off", leaked)
	}
	return "30 pings to agent-eu acknowledged from its buffer, none on the control plane yet", nil
}

func (w *world) reconnect(ctx context.Context) (string, error) {
	id, err := w.r.c.container(ctx, "agent-eu")
	if err != nil {
		return "", err
	}
	_, err = w.r.c.docker(ctx, "network", "connect", w.r.c.network("control"), id)
	return "docker network connect " + w.r.c.network("control"), err
}

func (w *world) count(ctx context.Context) (string, error) {
	var t tally
	start := time.Now()
	err := waitFor(ctx, 2*time.Minute, 2*time.Second, "every acknowledged ping stored", func() error {
		return w.manage(func(m *client.Manage) (err error) {
			if t, err = count(ctx, m, w.r.l); err != nil {
				return err
			}
			if len(t.duplicated) > 0 {
				return nil // fails below, at once
			}
			if len(t.missing) > 0 {
				return fmt.Errorf("%d acknowledged pings not stored, e.g. %s", len(t.missing), t.missing[0])
			}
			return nil
		})
	})
	sentN, _ := w.r.l.counts("")
	note := fmt.Sprintf("%d sent, %d acknowledged, %d stored (%d of them unacknowledged), %d missing, %d duplicated; all in after %s",
		sentN, t.acked, t.stored, t.unackedStored, len(t.missing), len(t.duplicated), time.Since(start).Round(100*time.Millisecond))
	w.r.facts = append(w.r.facts, "count: "+note)
	for _, phase := range []string{"control", "agent", "kill", "cut"} {
		if s, a := w.r.l.counts(phase); s > 0 {
			w.r.facts = append(w.r.facts, fmt.Sprintf("  %-8s %4d sent, %4d acknowledged", phase, s, a))
		}
	}
	if len(t.duplicated) > 0 {
		return note, fmt.Errorf("stored more than once: %s", strings.Join(first(t.duplicated, 5), ", "))
	}
	return note, err
}

// checkExecutions wants a successful execution of the regional check in
// each region: the agents reach the target, the control plane does not.
func (w *world) checkExecutions(ctx context.Context) (string, error) {
	var ok map[string]int
	err := waitFor(ctx, 90*time.Second, 2*time.Second, "a successful execution in eu and in us", func() error {
		var list struct {
			Executions []struct {
				Region string `json:"region"`
				Agent  string `json:"agent"`
				Status string `json:"status"`
			} `json:"executions"`
		}
		if err := w.getJSON(ctx, "/api/v1/monitors/"+w.checkUUID+"/executions?limit=100", &list); err != nil {
			return err
		}
		ok = map[string]int{}
		for _, e := range list.Executions {
			if e.Status == "success" {
				ok[e.Region]++
			}
		}
		if ok["eu"] == 0 || ok["us"] == 0 {
			return fmt.Errorf("successful executions by region: %v (of %d)", ok, len(list.Executions))
		}
		return nil
	})
	return fmt.Sprintf("successful executions: eu %d, us %d", ok["eu"], ok["us"]), err
}

// getJSON reads a Management API path from a live node.
func (w *world) getJSON(ctx context.Context, path string, out any) error {
	var last error
	for _, n := range w.live() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.url(n)+path, nil)
		req.Header.Set("Authorization", "Bearer "+w.manageKey)
		resp, err := w.client().Do(req)
		if err != nil {
			last = err
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("GET %s: %d %s %v", path, resp.StatusCode, strings.TrimSpace(string(body)), err)
			continue
		}
		return json.Unmarshal(body, out)
	}
	return last
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func first(list []string, n int) []string {
	if len(list) > n {
		return list[:n]
	}
	return list
}
