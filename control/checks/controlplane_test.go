package checks_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/alert"
	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channel/webhook"
	"lookout/control/checks"
	"lookout/control/controltest"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/netguard"
)

// TestHTTPCheckRetriesAlertsAndRecovers runs the scheduler, the real HTTP
// probe and the alert dispatcher over a real state store: a site that
// answers 500 twice then 200 is one success after 3 attempts; one that
// always answers 500 fails after 4 attempts and sends exactly one
// check.failed webhook, however often it fails; fixed, it sends
// check.recovered.
func TestHTTPCheckRetriesAlertsAndRecovers(t *testing.T) {
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cluster := controltest.NewCluster(store, time.Now)
	apply := func(c *raftv1.Command) {
		t.Helper()
		if res, err := cluster.Apply(context.Background(), c); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("apply %T: %v %v", c.GetOp(), res, err)
		}
	}
	key := func(id string, typ raftv1.KeyType) *raftv1.Key {
		return &raftv1.Key{Id: id, AccountId: "a", Type: typ, Name: id, Hash: []byte("hash-" + id)}
	}
	apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: "a", Email: "ops@example.com", Plan: &raftv1.Plan{Name: "free"},
		IngestKey: key("ik", raftv1.KeyType_KEY_TYPE_INGEST), ManagementKey: key("mk", raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}})
	rx := channeltest.NewReceiver(t)
	apply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: "a", ChannelId: "hook", Type: webhook.Type, Name: "hook", IsDefault: true,
		ConfigJson: []byte(`{"url":"` + rx.URL + `","secret":"whsec_dGVzdC1zaWduaW5nLWtleQ=="}`),
	}}})

	// The site: the first failures answers 500, then 200 (failures < 0:
	// always 500).
	var failures, hits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if f := failures.Load(); f < 0 || f > 0 && failures.Add(-1) >= 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer site.Close()
	failures.Store(2)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := alert.NewDispatcher(alert.DispatcherOptions{
		Cluster: cluster, State: store, Interval: 10 * time.Millisecond,
		Channels: alert.ChannelsFunc(channel.NewRegistry(map[string]channel.Factory{webhook.Type: webhook.New}, channel.Deps{HTTP: channeltest.HTTP()}).New),
	})
	// The site and the receiver are on loopback: allowed, as by
	// lookout control --allow-private-targets.
	sched := checks.New(checks.Options{Cluster: cluster, State: store, Feed: store.NewFeed(), Version: "test",
		DialContext: netguard.New(netguard.Options{AllowPrivate: true}).DialContext,
		RetryDelays: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}})
	done := make(chan struct{}, 2)
	go func() { d.Run(ctx); done <- struct{}{} }()
	go func() { sched.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()
	for !sched.Stats().Ready {
		time.Sleep(time.Millisecond)
	}

	const id = "c0000000-0000-4000-8000-00000000e2e0"
	tag := 0
	put := func(create bool) { // a change: the check runs at once
		tag++
		spec := &raftv1.MonitorSpec{Uuid: id, Kind: state.KindHTTPCheck, Name: "site", Enabled: true, Schedule: "1h",
			Tags:   []string{"v" + string(rune('0'+tag))},
			Config: &raftv1.CheckConfig{Url: site.URL, Method: "GET", Timeout: 5, ExpectedStatus: new(int64(200))}}
		op := &raftv1.PutMonitors{AccountId: "a"}
		if create {
			op.Creates = []*raftv1.MonitorSpec{spec}
		} else {
			op.Updates = []*raftv1.MonitorSpec{spec}
		}
		apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: op}})
	}
	verdicts := func() []*raftv1.Execution {
		execs, err := store.Executions("a", id, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []*raftv1.Execution
		for _, e := range execs {
			if state.FinalStatus(e.GetStatus()) {
				out = append(out, e)
			}
		}
		return out
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	alertTypes := func() []string {
		var out []string
		for _, r := range rx.Requests() {
			var p webhook.Payload
			if err := json.Unmarshal(r.Body, &p); err != nil {
				t.Fatalf("webhook body %s: %v", r.Body, err)
			}
			out = append(out, p.Type)
		}
		return out
	}

	// 500, 500, 200: one execution, success after 3 attempts; no alert.
	put(true)
	waitFor("the first verdict", func() bool { return len(verdicts()) == 1 })
	if v := verdicts()[0]; v.GetStatus() != state.ExecSuccess || v.GetAttempts() != 3 || v.GetHttp().GetStatusCode() != 200 || hits.Load() != 3 {
		t.Fatalf("first execution %v after %d requests", v, hits.Load())
	}

	// Always 500: failed after 4 attempts, one check.failed, also after a
	// second failure.
	failures.Store(-1)
	put(false)
	waitFor("the failure", func() bool { return len(verdicts()) == 2 })
	v := verdicts()[0]
	if v.GetStatus() != state.ExecFailed || v.GetAttempts() != 4 || v.GetError() == "" || v.GetHttp().GetStatusCode() != 500 {
		t.Fatalf("failed execution %v", v)
	}
	waitFor("the check.failed webhook", func() bool { return len(rx.Requests()) == 1 })
	var p webhook.Payload
	if err := json.Unmarshal(rx.Requests()[0].Body, &p); err != nil || p.Type != "check.failed" || p.Event == nil ||
		p.Event.Execution == nil || p.Event.Status != "failed" || p.Event.Execution.Attempts != 4 || p.Event.Execution.HTTP.StatusCode != 500 {
		t.Fatalf("webhook %s: %v", rx.Requests()[0].Body, err)
	}
	time.Sleep(10 * time.Millisecond) // distinct leader-stamped update times
	put(false)
	waitFor("the second failure", func() bool { return len(verdicts()) == 3 })

	// Fixed: check.recovered.
	failures.Store(0)
	time.Sleep(10 * time.Millisecond)
	put(false)
	waitFor("the recovery", func() bool { return len(verdicts()) == 4 && verdicts()[0].GetStatus() == state.ExecSuccess })
	waitFor("the check.recovered webhook", func() bool { return len(rx.Requests()) >= 2 })
	time.Sleep(100 * time.Millisecond) // a stray extra alert would have come by now
	if got := alertTypes(); len(got) != 2 || got[0] != "check.failed" || got[1] != "check.recovered" {
		t.Fatalf("webhooks %v", got)
	}
}
