package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/control/alert"
	"lookout/control/alert/channel"
	"lookout/control/alert/channel/webhook"
	"lookout/control/checks"
	"lookout/control/state"
	"lookout/internal/bench"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
	"lookout/internal/probe"
	"lookout/internal/probe/httpprobe"
	"lookout/internal/schedule"
)

// secret signs the webhooks (whsec_ + base64 of a test key).
const secret = "whsec_dGVzdC1zaWduaW5nLWtleQ=="

// bSchedule is B's check's schedule.
const bSchedule = "30s"

func run(ctx context.Context, o options) error {
	d, err := bench.OpenDirect("lookout-bench-fairness-")
	if err != nil {
		return err
	}
	defer d.Close()
	hang, err := startSilent()
	if err != nil {
		return err
	}
	defer hang.close()
	ok, err := startGood()
	if err != nil {
		return err
	}
	defer ok.srv.Close()

	// The accounts and their channels.
	a, b := uuid.NewString(), uuid.NewString()
	for _, acct := range []string{a, b} {
		if err := createAccount(ctx, d, acct); err != nil {
			return err
		}
	}
	for i := range o.channels {
		if err := createChannel(ctx, d, a, fmt.Sprint("a-", i), hang.url); err != nil {
			return err
		}
	}
	if err := createChannel(ctx, d, b, "b", ok.url); err != nil {
		return err
	}

	// The leader's scheduler and dispatcher, with the real probe and
	// webhook channel (a client of its own: the dispatcher's SendTimeout
	// bounds each try).
	logger := hclog.New(&hclog.LoggerOptions{Name: "bench", Level: hclog.Error, Output: os.Stderr})
	sched := checks.New(checks.Options{
		Cluster: d, State: d.Store, Feed: d.Store.NewFeed(), AccountShare: o.shareOption(),
		Probers: map[string]probe.Prober{state.KindHTTPCheck: httpprobe.New(probe.Options{Version: "bench"})},
		Logger:  logger.Named("checks"),
	})
	registry := channel.NewRegistry(map[string]channel.Factory{webhook.Type: webhook.New}, channel.Deps{HTTP: &http.Client{}})
	disp := alert.NewDispatcher(alert.DispatcherOptions{
		Cluster: d, State: d.Store, Channels: alert.ChannelsFunc(registry.New), AccountConcurrency: o.shareOption(),
		Logger: logger.Named("dispatch"),
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan struct{}, 2)
	go func() { sched.Run(runCtx); stopped <- struct{}{} }()
	go func() { disp.Run(runCtx); stopped <- struct{}{} }()
	for !sched.Stats().Ready {
		if err := sleep(ctx, time.Millisecond); err != nil {
			return err
		}
	}

	share := "none"
	if o.share > 0 {
		share = fmt.Sprint(o.share)
	}
	fmt.Printf("lookout fairness: one process, a real state store, no raft; the leader's scheduler (64 workers) and dispatcher (16 slots, 2 per channel)\n")
	fmt.Printf("per-account share of workers and slots: %s\n", share)
	fmt.Printf("account A: %d http_checks every 1m (timeout %d s) and %d failing monitors alerting %d webhook channels, all at a listener that never answers\n",
		o.checks, o.timeout, o.failing, o.channels)
	fmt.Printf("account B: one http_check every %s and one webhook channel at a server that answers at once; an alert every %s; measured for %s\n",
		bSchedule, o.alertEvery, o.duration)

	// A's load: its checks run at once (new), its alerts are due at once.
	if err := putChecks(ctx, d, a, o.checks, hang.url, "1m", o.timeout); err != nil {
		return err
	}
	if err := failMonitors(ctx, d, a, o.failing); err != nil {
		return err
	}
	disp.Notify()
	if err := sleep(ctx, 2*time.Second); err != nil {
		return err
	}
	fmt.Printf("A's connections to its hanging listener after 2 s: %d\n", hang.connections())

	// B: its check (runs at once, then every 30 s) and its alerts.
	start := time.Now()
	bCheck, err := putCheck(ctx, d, b, ok.url, bSchedule, manifest.DefaultCheckTimeout)
	if err != nil {
		return err
	}
	raised := 0
	for end := start.Add(o.duration); time.Now().Before(end); {
		status := "fail"
		if raised%2 == 1 {
			status = "complete"
		}
		if err := ping(ctx, d, b, "b-job", status); err != nil {
			return err
		}
		disp.Notify() // as the deadline engine does when an entry raised alerts
		raised++
		if err := sleep(ctx, min(o.alertEvery, time.Until(end))); err != nil {
			return err
		}
	}
	end := time.Now()
	// Alerts raised at the very end get a moment to arrive.
	if err := sleep(ctx, time.Second); err != nil {
		return err
	}
	st := sched.Stats()
	held := hang.connections()
	cancel()
	<-stopped
	<-stopped

	// B's slots: the one at its creation, then every 30 s.
	sc, err := schedule.Parse(bSchedule)
	if err != nil {
		return err
	}
	due := 1
	for s := sc.NextFor(bCheck, start); !s.After(end); s = sc.NextFor(bCheck, s) {
		due++
	}
	execs, err := d.Store.Executions(b, bCheck, 0)
	if err != nil {
		return err
	}
	var lags []time.Duration
	for _, ex := range execs {
		lags = append(lags, time.Duration(ex.GetStartedUnixMs()-ex.GetSlotUnixMs())*time.Millisecond)
	}
	fmt.Printf("A's connections held at the end: %d; scheduler: runs %d, skipped %d, waiting for their account's share %d\n",
		held, st.Runs, st.Skipped, st.WaitingForShare)
	report("B's check: slot to execution start", "slots", due, lags)
	report("B's alerts: raised to delivered", "alerts", raised, ok.delays())
	return nil
}

// report prints one figure: how many of want ran, the median and max.
func report(what, unit string, want int, ds []time.Duration) {
	if len(ds) == 0 {
		fmt.Printf("%s: 0 of %d %s\n", what, want, unit)
		return
	}
	slices.Sort(ds)
	fmt.Printf("%s: %d of %d %s; median %.3f s, max %.3f s\n", what, len(ds), want, unit,
		ds[len(ds)/2].Seconds(), ds[len(ds)-1].Seconds())
}

func createAccount(ctx context.Context, d *bench.Direct, id string) error {
	key := func(typ raftv1.KeyType) *raftv1.Key {
		return &raftv1.Key{Id: uuid.NewString(), AccountId: id, Type: typ, Hash: []byte(uuid.NewString())}
	}
	return d.Must(ctx, &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: id, Email: id + "@example.com",
		Plan:      &raftv1.Plan{Name: "bench", MonitorsCreatedPerMinute: proto.Int64(state.MaxMonitorsCreatedPerMinute)},
		IngestKey: key(raftv1.KeyType_KEY_TYPE_INGEST), ManagementKey: key(raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}})
}

func createChannel(ctx context.Context, d *bench.Direct, account, name, url string) error {
	return d.Must(ctx, &raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: account, ChannelId: uuid.NewString(), Type: webhook.Type, Name: name, IsDefault: true,
		ConfigJson: []byte(`{"url":"` + url + `","secret":"` + secret + `"}`),
	}}})
}

// putChecks creates n http_checks of account at url.
func putChecks(ctx context.Context, d *bench.Direct, account string, n int, url, sched string, timeout int64) error {
	for range n {
		if _, err := putCheck(ctx, d, account, url, sched, timeout); err != nil {
			return err
		}
	}
	return nil
}

// putCheck creates an http_check of account at url and returns its uuid.
func putCheck(ctx context.Context, d *bench.Direct, account, url, sched string, timeout int64) (string, error) {
	id := uuid.NewString()
	return id, d.Must(ctx, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: account, Creates: []*raftv1.MonitorSpec{{
		Uuid: id, Kind: state.KindHTTPCheck, Name: "check-" + id[:8], Enabled: true, Project: proto.String(""), Schedule: sched,
		Config: &raftv1.CheckConfig{Url: url, Method: manifest.DefaultMethod, Timeout: timeout, ExpectedStatus: proto.Int64(200)},
	}}}}})
}

// failMonitors sends a fail ping of n new ping monitors of account.
func failMonitors(ctx context.Context, d *bench.Direct, account string, n int) error {
	for i := range n {
		if err := ping(ctx, d, account, fmt.Sprint("a-job-", i), "fail"); err != nil {
			return err
		}
	}
	return nil
}

// ping stores a ping of account's monitor (made by its first ping).
func ping(ctx context.Context, d *bench.Direct, account, monitor, status string) error {
	res, err := d.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: []*raftv1.Event{{
		AccountId: account, Monitor: monitor, EventType: "ping", Status: status, ReceivedUnixMs: time.Now().UnixMilli(),
	}}}}})
	if err != nil {
		return err
	}
	if got := res.GetEvents(); len(got) != 1 || got[0].GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_STORED {
		return fmt.Errorf("a ping of %s was not stored: %v", monitor, res)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
