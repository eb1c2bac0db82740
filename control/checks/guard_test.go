package checks_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lookout/control/checks"
	"lookout/control/controltest"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/probe/probetest"
)

// TestPrivateTargetsRefused runs the scheduler as lookout control builds
// it by default (no --allow-private-targets) over a real state store:
// http_checks of a site on loopback, by address, by a name that resolves
// to it, and by IPv6 loopback, an ssl_check and a tcp_check of it, and a
// dns_check asking a server on loopback, each fail at once
// (one attempt, no retry) with an error beginning "target not allowed:",
// and the site sees nothing.
func TestPrivateTargetsRefused(t *testing.T) {
	store := controltest.OpenStore(t)
	cluster := controltest.NewCluster(store, time.Now)
	cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: "a", Email: "ops@example.com", Plan: &raftv1.Plan{Name: "free"},
		IngestKey:     &raftv1.Key{Id: "ik", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "ik", Hash: []byte("hash-ik")},
		ManagementKey: &raftv1.Key{Id: "mk", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "mk", Hash: []byte("hash-mk")},
	}}})

	var hits atomic.Int64
	count := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) })
	site := httptest.NewServer(count)
	defer site.Close()
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	portNum, _ := strconv.Atoi(port)
	dnsSrv := probetest.NewDNSServer(t, "www.corp.test. 60 IN A 192.0.2.1")
	type check struct {
		id   string
		kind string
		cfg  *raftv1.CheckConfig
	}
	targets := map[string]check{
		"by-address": {"c0000000-0000-4000-8000-000000000001", state.KindHTTPCheck, &raftv1.CheckConfig{Url: site.URL + "/", Timeout: 5}},
		"by-name":    {"c0000000-0000-4000-8000-000000000002", state.KindHTTPCheck, &raftv1.CheckConfig{Url: "http://localhost:" + port + "/", Timeout: 5}},
		"ssl":        {"c0000000-0000-4000-8000-000000000003", state.KindSSLCheck, &raftv1.CheckConfig{Domain: "127.0.0.1:" + port, Timeout: 5}},
		"tcp":        {"c0000000-0000-4000-8000-000000000005", state.KindTCPCheck, &raftv1.CheckConfig{Host: "localhost", Port: int64(portNum), Timeout: 5}},
		// A DNS server on loopback: a tenant may not ask an internal
		// resolver through the leader.
		"dns": {"c0000000-0000-4000-8000-000000000006", state.KindDNSCheck, &raftv1.CheckConfig{DnsName: "www.corp.test", DnsType: "A", DnsServer: dnsSrv.Addr, Timeout: 5}},
	}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		site6 := httptest.NewUnstartedServer(count)
		site6.Listener.Close()
		site6.Listener = ln
		site6.Start()
		defer site6.Close()
		targets["ipv6"] = check{"c0000000-0000-4000-8000-000000000004", state.KindHTTPCheck, &raftv1.CheckConfig{Url: site6.URL + "/", Timeout: 5}}
	}

	ctx, cancel := context.WithCancel(context.Background())
	sched := checks.New(checks.Options{Cluster: cluster, State: store, Feed: store.NewFeed(), Version: "test",
		RetryDelays: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}})
	done := make(chan struct{})
	go func() { sched.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for !sched.Stats().Ready {
		time.Sleep(time.Millisecond)
	}

	op := &raftv1.PutMonitors{AccountId: "a"}
	for name, c := range targets {
		op.Creates = append(op.Creates, &raftv1.MonitorSpec{Uuid: c.id, Kind: c.kind, Name: name, Enabled: true, Schedule: "1h", Config: c.cfg})
	}
	cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: op}})

	for name, c := range targets {
		var v *raftv1.Execution
		for deadline := time.Now().Add(30 * time.Second); v == nil; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no verdict", name)
			}
			execs, err := store.Executions("a", c.id, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range execs {
				if state.FinalStatus(e.GetStatus()) {
					v = e
				}
			}
		}
		if v.GetStatus() != state.ExecFailed || v.GetAttempts() != 1 || !strings.HasPrefix(v.GetError(), "target not allowed: ") ||
			!strings.HasSuffix(v.GetError(), "is a loopback address") {
			t.Errorf("%s: execution %v", name, v)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the site got %d requests", n)
	}
	if n := dnsSrv.Queries(); n != 0 {
		t.Errorf("the DNS server got %d questions", n)
	}
}
