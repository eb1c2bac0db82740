package presence_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"lookout/control/controltest"
	"lookout/control/engine"
	"lookout/control/presence"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestSilentRegionHoldsDeadlines: a monitor's deadline that passes while
// its region's only agent is disconnected (well before the region could be
// declared offline) does not fire; when the agent is back with an empty
// buffer the deadline, really missed, fires once.
func TestSilentRegionHoldsDeadlines(t *testing.T) {
	t.Parallel()
	st := controltest.OpenStore(t)
	real := controltest.NewCluster(st, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mustApply := func(cmd *raftv1.Command) { real.MustApply(t, cmd) }
	mustApply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: "a", Email: "a@example.com", Plan: &raftv1.Plan{Name: "default"},
		IngestKey:     &raftv1.Key{Id: "ik", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "i", Hash: []byte("ih")},
		ManagementKey: &raftv1.Key{Id: "mk", AccountId: "a", Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "m", Hash: []byte("mh")},
	}}})
	mustApply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: "a", ChannelId: "hook", Type: "webhook", Name: "hook", IsDefault: true,
		ConfigJson: []byte(`{"url":"http://127.0.0.1:9/","secret":"whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="}`),
	}}})
	interval, grace := int64(60), int64(0)
	mustApply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Creates: []*raftv1.MonitorSpec{{
		Uuid: "00000000-0000-4000-8000-000000000001", Kind: "ping", Name: "job", Enabled: true, TimeoutSeconds: 3600,
		ExpectedIntervalSeconds: &interval, GraceSeconds: &grace,
	}}}}})

	rec := presence.NewRecorder(presence.RecorderOptions{Cluster: real})
	seen := presence.Seen{AgentID: "ag", Region: "eu", Connected: true}
	if err := rec.Seen(ctx, seen); err != nil {
		t.Fatal(err)
	}
	// The region may go offline only after an hour: this is about the
	// time before that verdict.
	w := presence.NewWatcher(presence.WatcherOptions{Cluster: real, State: st, OfflineAfter: time.Hour, Tick: 50 * time.Millisecond})
	w.Refresh(ctx)
	e := engine.NewDeadlines(engine.DeadlineOptions{Cluster: real, State: st, Held: w.Held, HeldChanged: w.HeldChanged()})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.Run(ctx) }()
	go func() { defer wg.Done(); e.Run(ctx) }()
	defer wg.Wait()
	defer cancel()

	// The agent's stream closes; a ping it forwarded before is due in 2 s.
	seen.Connected = false
	if err := rec.Seen(ctx, seen); err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Add(-58 * time.Second).Unix()
	mustApply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{{
		AccountId: "a", KeyId: "ik", Monitor: "job", EventType: "ping", Status: "complete", Timestamp: &ts, Region: "eu", ReceivedUnixMs: time.Now().UnixMilli(),
	}}}}})
	missed := func() int {
		alerts, err := st.PendingAlerts(0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, a := range alerts {
			if a.GetType() == "monitor.missed" {
				n++
			}
		}
		return n
	}
	time.Sleep(time.Until(time.Unix(ts+60, 0).Add(1500 * time.Millisecond)))
	if n := missed(); n != 0 || e.Stats().Fired != 0 {
		t.Fatalf("%d missed alerts, %d fired, while the region's agent was away", n, e.Stats().Fired)
	}
	if off, _ := st.RegionOffline("eu"); off {
		t.Fatal("eu offline before an hour")
	}
	// Back with an empty buffer: the run was really missed.
	seen.Connected = true
	if err := rec.Seen(ctx, seen); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for missed() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if n := missed(); n != 1 {
		t.Fatalf("%d missed alerts after the agent returned, want 1", n)
	}
}
