package checks_test

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"lookout/control/alert"
	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/webhook"
	"lookout/control/checks"
	"lookout/control/controltest"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/netguard"
	"lookout/internal/probe/probetest"
)

// TestTCPAndDNSChecksOnTheLeader runs tcp_checks and dns_checks with the
// scheduler's default probers (the leader's, with private targets allowed
// as by --allow-private-targets) against a TCP echo server and a DNS
// server on loopback: the passing ones record their tcp and dns details,
// the failing ones fail at once with what was asserted, and a failing
// dns_check sends one check.failed webhook carrying its answers.
func TestTCPAndDNSChecksOnTheLeader(t *testing.T) {
	store := controltest.OpenStore(t)
	cluster := controltest.NewCluster(store, time.Now)
	cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: "a", Email: "ops@example.com", Plan: &raftv1.Plan{Name: "free"},
		IngestKey:     &raftv1.Key{Id: "ik", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "ik", Hash: []byte("hash-ik")},
		ManagementKey: &raftv1.Key{Id: "mk", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "mk", Hash: []byte("hash-mk")},
	}}})
	rx := channeltest.NewReceiver(t)
	cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: "a", ChannelId: "hook", Type: webhook.Type, Name: "hook", IsDefault: true,
		ConfigJson: []byte(`{"url":"` + rx.URL + `","secret":"whsec_dGVzdC1zaWduaW5nLWtleQ=="}`),
	}}})
	echo := probetest.NewTCPServer(t, probetest.Echo)
	bye := probetest.NewTCPServer(t, func(c net.Conn) { _, _ = c.Write([]byte("BYE")) })
	dns := probetest.NewDNSServer(t, "www.corp.test. 60 IN A 192.0.2.10", "corp.test. 60 IN MX 10 mail.corp.test.")

	ctx, cancel := context.WithCancel(context.Background())
	d := alert.NewDispatcher(alert.DispatcherOptions{
		Cluster: cluster, State: store, Interval: 10 * time.Millisecond,
		Channels: alert.ChannelsFunc(channel.NewRegistry(map[string]channel.Factory{webhook.Type: webhook.New}, channel.Deps{HTTP: channeltest.HTTP()}).New),
	})
	sched := checks.New(checks.Options{Cluster: cluster, State: store, Feed: store.NewFeed(), Version: "test",
		DialContext: netguard.New(netguard.Options{AllowPrivate: true}).DialContext,
		RetryDelays: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}})
	done := make(chan struct{}, 2)
	go func() { d.Run(ctx); done <- struct{}{} }()
	go func() { sched.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()
	for !sched.Stats().Ready {
		time.Sleep(time.Millisecond)
	}

	type check struct {
		id, kind string
		cfg      *raftv1.CheckConfig
		status   string
		err      string
	}
	checksByName := map[string]check{
		"tcp up": {"d0000000-0000-4000-8000-000000000001", state.KindTCPCheck,
			&raftv1.CheckConfig{Host: "127.0.0.1", Port: int64(echo.Port), Timeout: 5, Send: "PING\r\n", Expect: "PING"}, state.ExecSuccess, ""},
		"tcp closed": {"d0000000-0000-4000-8000-000000000002", state.KindTCPCheck,
			&raftv1.CheckConfig{Host: "127.0.0.1", Port: int64(bye.Port), Timeout: 5, Expect: "HELLO"}, state.ExecFailed, `the connection closed after 3 bytes without "HELLO"`},
		"dns up": {"d0000000-0000-4000-8000-000000000003", state.KindDNSCheck,
			&raftv1.CheckConfig{DnsName: "corp.test", DnsType: "MX", DnsServer: dns.Addr, DnsExpected: []string{"mail.corp.test"}, Timeout: 5}, state.ExecSuccess, ""},
		"dns wrong": {"d0000000-0000-4000-8000-000000000004", state.KindDNSCheck,
			&raftv1.CheckConfig{DnsName: "www.corp.test", DnsType: "A", DnsServer: dns.Addr, DnsExpected: []string{"192.0.2.99"}, Timeout: 5},
			state.ExecFailed, "192.0.2.99 is not among the A records of www.corp.test (192.0.2.10)"},
	}
	op := &raftv1.PutMonitors{AccountId: "a"}
	for name, c := range checksByName {
		op.Creates = append(op.Creates, &raftv1.MonitorSpec{Uuid: c.id, Kind: c.kind, Name: name, Enabled: true, Schedule: "1h", Config: c.cfg})
	}
	cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: op}})

	for name, c := range checksByName {
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
		if v.GetStatus() != c.status || c.err != "" && v.GetError() != c.err {
			t.Errorf("%s: execution %v, want %s %q", name, v, c.status, c.err)
		}
		switch {
		case c.kind == state.KindTCPCheck && v.GetTcp() == nil:
			t.Errorf("%s: no tcp details: %v", name, v)
		case c.kind == state.KindDNSCheck && len(v.GetDns().GetAnswers()) == 0:
			t.Errorf("%s: no dns answers: %v", name, v)
		case c.status == state.ExecFailed && v.GetAttempts() != 1:
			t.Errorf("%s: a failed assertion was retried: %v", name, v)
		}
	}
	var hooks []webhook.Payload
	for deadline := time.Now().Add(30 * time.Second); len(hooks) < 2; time.Sleep(10 * time.Millisecond) {
		// One check.failed for each failing check.
		if time.Now().After(deadline) {
			t.Fatalf("webhooks %d, want 2", len(rx.Requests()))
		}
		hooks = hooks[:0]
		for _, r := range rx.Requests() {
			var p webhook.Payload
			if err := json.Unmarshal(r.Body, &p); err != nil {
				t.Fatal(err)
			}
			hooks = append(hooks, p)
		}
	}
	var dnsHook *webhook.Payload
	for i, p := range hooks {
		if p.Type != "check.failed" {
			t.Errorf("webhook %s for %s", p.Type, p.Monitor.Name)
		}
		if p.Monitor.Name == "dns wrong" {
			dnsHook = &hooks[i]
		}
	}
	if dnsHook == nil || dnsHook.Event.Execution.DNS == nil || !slices.Equal(dnsHook.Event.Execution.DNS.Answers, []string{"192.0.2.10"}) ||
		!strings.Contains(dnsHook.Event.Message, "192.0.2.99 is not among") {
		t.Fatalf("the dns_check's webhook %+v", dnsHook)
	}
}
