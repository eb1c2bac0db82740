package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/control/checks"
	"lookout/control/state"
	"lookout/internal/bench"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/manifest"
	"lookout/internal/netguard"
)

// runInproc measures the scheduler in this process over a real state store,
// without raft, for d.
func runInproc(ctx context.Context, tg *target, n int, d time.Duration) error {
	c, err := bench.OpenDirect("lookout-bench-checks-")
	if err != nil {
		return err
	}
	defer c.Close()
	store := c.Store
	start := time.Now()
	if err := setupChecks(ctx, c, n, tg.url); err != nil {
		return err
	}
	fmt.Printf("\nlookout check scheduler, part 2: in one process, a real state store, no raft; %d http_checks every 1m\n", n)
	fmt.Printf("setup (checks through the state machine): %s\n", time.Since(start).Round(time.Millisecond))

	type lag struct{ slot, started time.Time }
	var mu sync.Mutex
	lags := make([]lag, 0, 2*n)
	feed := store.NewFeed()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	s := checks.New(checks.Options{
		Cluster: c, State: store, Feed: feed,
		// The target is on loopback.
		DialContext: netguard.New(netguard.Options{AllowPrivate: true}).DialContext,
		Logger:      hclog.New(&hclog.LoggerOptions{Name: "checks", Level: hclog.Error, Output: os.Stderr}),
		OnStart: func(slot, started time.Time) {
			mu.Lock()
			lags = append(lags, lag{slot, started})
			mu.Unlock()
		},
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); s.Run(runCtx) }()
	rebuildStart := time.Now()
	for !s.Stats().Ready {
		time.Sleep(time.Millisecond)
	}
	ready := time.Now()
	fmt.Printf("rebuild: %s (the slots of the last 30 s start at once, as on a new leader)\n", ready.Sub(rebuildStart).Round(time.Millisecond))
	heapNow := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) - float64(before.HeapAlloc)
	}
	atReady := heapNow()
	// The measured slots start after the rebuild's burst has drained.
	t0 := ready.Add(30 * time.Second)
	cpu0 := bench.SelfCPU()
	if err := sleep(ctx, time.Until(start.Add(d))); err != nil {
		return err
	}
	running := heapNow()
	cpu := bench.SelfCPU() - cpu0
	st := s.Stats()
	cancel()
	<-done

	var window []time.Duration
	mu.Lock()
	for _, l := range lags {
		if !l.slot.Before(t0) {
			window = append(window, l.started.Sub(l.slot))
		}
	}
	mu.Unlock()
	fmt.Printf("runs %d, skipped %d, errors %d; scheduled slots from rebuild + 30 s on: %d\n", st.Runs, st.Skipped, st.Errors, len(window))
	lagHeader()
	lagRow("scheduled slots (OnStart hook)", window)
	fmt.Printf("scheduler heap: %.0f bytes per check after the rebuild (%.1f MiB), %.0f bytes per check while running (%.1f MiB)\n",
		atReady/float64(n), atReady/(1<<20), running/float64(n), running/(1<<20))
	el := time.Since(t0).Minutes()
	fmt.Printf("process CPU (scheduler, probes, state machine and the target server) after the rebuild: %.1f s per minute\n", cpu.Seconds()/max(el, 0.01))
	return nil
}

// setupChecks makes an account without limits and n http_checks every
// minute of target, stored as the Management API stores them.
func setupChecks(ctx context.Context, c *bench.Direct, n int, target string) error {
	acct := uuid.NewString()
	key := func(typ raftv1.KeyType) *raftv1.Key {
		return &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: typ, Hash: []byte(uuid.NewString())}
	}
	if err := c.Must(ctx, &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: "bench@example.com", Plan: &raftv1.Plan{Name: "bench"},
		IngestKey: key(raftv1.KeyType_KEY_TYPE_INGEST), ManagementKey: key(raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}}); err != nil {
		return err
	}
	for i := 0; i < n; i += part {
		put := &raftv1.PutMonitors{AccountId: acct}
		for j := i; j < min(n, i+part); j++ {
			put.Creates = append(put.Creates, &raftv1.MonitorSpec{
				Uuid: uuid.NewString(), Kind: state.KindHTTPCheck, Name: fmt.Sprintf("site-%05d", j), Enabled: true,
				Project: proto.String(""), Schedule: "1m",
				Config: &raftv1.CheckConfig{
					Url: fmt.Sprintf("%s?site=%d", target, j), Method: manifest.DefaultMethod,
					Timeout: manifest.DefaultCheckTimeout, ExpectedStatus: proto.Int64(200),
				},
			})
		}
		if err := c.Must(ctx, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: put}}); err != nil {
			return err
		}
	}
	return nil
}
