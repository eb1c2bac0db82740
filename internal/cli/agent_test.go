package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"lookout/agent/agenttest"
	"lookout/agent/assign"
	"lookout/agent/forward"
	"lookout/agent/link"
	"lookout/agent/region"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestParseAgent(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	base := map[string]string{"LOOKOUT_CONTROL": "http://a:8080, https://b:8443", "LOOKOUT_TOKEN": "at_x", "LOOKOUT_REGION": "eu-1", "LOOKOUT_DATA_DIR": "/tmp/ag"}
	t.Run("environment and defaults", func(t *testing.T) {
		c, err := parseAgent([]string{"--name", "edge-1"}, env(base), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(c.control, "|") != "http://a:8080|https://b:8443" || c.token != "at_x" || c.region != "eu-1" || c.dataDir != "/tmp/ag" ||
			c.name != "edge-1" || c.httpAddr != "127.0.0.1:8090" || c.bufferMaxBytes != 1<<30 || c.gossipAddr != "" {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("name defaults to the host name", func(t *testing.T) {
		c, err := parseAgent(nil, env(base), io.Discard)
		if err != nil || c.name == "" {
			t.Fatalf("%+v %v", c, err)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		drop string
		want string
	}{
		{"control required", nil, "LOOKOUT_CONTROL", "--control"},
		{"token required", nil, "LOOKOUT_TOKEN", "--token"},
		{"region required", nil, "LOOKOUT_REGION", "--region"},
		{"data dir required", nil, "LOOKOUT_DATA_DIR", "--data-dir"},
		{"bad control URL", []string{"--control", "a:8080"}, "", "want http://host:port"},
		{"cert without key", []string{"--tls-cert", "c.pem"}, "", "go together"},
		{"tiny buffer", []string{"--buffer-max-bytes", "1000"}, "", "at least 1048576"},
		{"join without gossip", []string{"--join", "x:1"}, "", "needs --gossip-addr"},
		{"no arguments", []string{"extra"}, "", "takes no arguments"},
		{"name with ESC", []string{"--name", "edge\x1b[31m"}, "", "control character"},
		{"name with an RTL override", []string{"--name", "edge\u202e1"}, "", "must not contain bidirectional"},
		{"name of zero-width characters", []string{"--name", "\u200b\u2060"}, "", "must not be blank"},
		{"long name", []string{"--name", strings.Repeat("n", 65)}, "", "at most 64"},
		{"name with a control character", []string{"--name", "edge\x01"}, "", "control character"},
		{"no gossip key flag: the control plane hands it out", []string{"--gossip-addr", "127.0.0.1:0", "--gossip-key", "MDEyMzQ1Njc4OWFiY2RlZg=="}, "", "flag provided but not defined: -gossip-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := map[string]string{}
			for k, v := range base {
				if k != tc.drop {
					e[k] = v
				}
			}
			_, err := parseAgent(tc.args, env(e), io.Discard)
			var ue usageError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
				t.Fatalf("error %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

// TestServeAgent runs the agent's composition root against a fake control
// plane, with an in-memory buffer and a stand-in for the local ingest:
// the assigned check runs and its verdict reaches the control plane, the
// local listener serves /metrics and the ingest handler (given the
// assignments' keys), and the agent stops cleanly. A data dir of another
// region is refused.
func TestServeAgent(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer target.Close()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutKey(&agentv1.IngestKey{Id: "k1", Hash: []byte("hash-1"), AccountId: "acc1"})
	cp.PutCheck(&agentv1.Check{Id: "c1", AccountId: "acc1", Kind: "http_check", Schedule: "1h", Config: &raftv1.CheckConfig{Url: target.URL, Timeout: 5}})
	dir := t.TempDir()
	cfg, err := parseAgent([]string{"--control", cp.URL(), "--token", "at_ok", "--region", "eu-1", "--data-dir", dir,
		"--name", "edge-t", "--http-addr", "127.0.0.1:0", "--log-level", "error"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	buf := agenttest.NewBuffer()
	closed := false
	open := func(*agentConfig, hclog.Logger, prometheus.Registerer, func()) (*agentLocal, error) {
		return &agentLocal{
			Buffer: buf,
			Ingest: func(keys *assign.Store, fwd *forward.Forwarder, _ *link.Client, _ *region.Pool) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, ok := keys.KeyByHash([]byte(r.URL.Query().Get("hash")))
					fmt.Fprintf(w, "known=%v", ok)
				})
			},
			Close: func() error { closed = true; return nil },
		}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- serveAgent(ctx, cfg, open, io.Discard, func(a string) { addrc <- a }) }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("the agent stopped: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(cp.Executions()) == 0 || buf.Stats().Results > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the check's verdict did not reach the control plane")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ex := cp.Executions()[0]; ex.GetStatus() != "success" || ex.GetAgent() != "edge-t" {
		t.Fatalf("execution %v", ex)
	}
	get := func(path string) string {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	m := get("/metrics")
	for _, want := range []string{`lookout_agent_link_state{state="connected"} 1`, `lookout_agent_forwarded_total{kind="result"} 1`, `lookout_agent_assignments{kind="keys"} 1`, "go_goroutines"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if got := get("/ping?hash=hash-1"); got != "known=true" {
		t.Fatalf("the ingest handler saw %q", got)
	}
	cancel()
	if err := <-done; err != nil || !closed {
		t.Fatalf("stop: %v, buffer closed %v", err, closed)
	}

	cfg.region = "us-1"
	err = serveAgent(context.Background(), cfg, open, io.Discard, nil)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `region "eu-1"`) {
		t.Fatalf("a data dir of another region: %v", err)
	}
}

// TestServeAgentDenyPrivateTargets: lookout agent probes any address
// (TestServeAgent checks a loopback site); with --deny-private-targets
// (or its variable) the control plane's address rule applies to its
// probes: a check of a loopback site fails at once with "target not
// allowed:", and the site sees nothing.
func TestServeAgentDenyPrivateTargets(t *testing.T) {
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer target.Close()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutCheck(&agentv1.Check{Id: "c1", AccountId: "acc1", Kind: "http_check", Schedule: "1h", Config: &raftv1.CheckConfig{Url: target.URL, Timeout: 5}})
	cfg, err := parseAgent([]string{"--control", cp.URL(), "--token", "at_ok", "--region", "eu-1", "--data-dir", t.TempDir(),
		"--name", "edge-t", "--http-addr", "127.0.0.1:0", "--log-level", "error"},
		func(k string) string { return map[string]string{"LOOKOUT_DENY_PRIVATE_TARGETS": "true"}[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	buf := agenttest.NewBuffer()
	open := func(*agentConfig, hclog.Logger, prometheus.Registerer, func()) (*agentLocal, error) {
		return &agentLocal{
			Buffer: buf,
			Ingest: func(*assign.Store, *forward.Forwarder, *link.Client, *region.Pool) http.Handler {
				return http.NotFoundHandler()
			},
			Close: func() error { return nil },
		}, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveAgent(ctx, cfg, open, io.Discard, nil) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); len(cp.Executions()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the check's verdict did not reach the control plane")
		}
	}
	ex := cp.Executions()[0]
	if ex.GetStatus() != "failed" || ex.GetAttempts() != 1 || !strings.HasPrefix(ex.GetError(), "target not allowed: 127.0.0.1 is a loopback address") {
		t.Fatalf("execution %v", ex)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the site got %d requests", n)
	}
}
