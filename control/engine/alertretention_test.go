package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/control/controltest"
	"lookout/control/engine"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// countingApplier records the PruneAlerts entries it passes on.
type countingApplier struct {
	engine.Applier

	mu      sync.Mutex
	entries []int64 // max of each PruneAlerts
}

func (c *countingApplier) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if p := cmd.GetPruneAlerts(); p != nil {
		c.mu.Lock()
		c.entries = append(c.entries, p.GetMax())
		c.mu.Unlock()
	}
	return c.Applier.Apply(ctx, cmd)
}

func TestRetentionSweepsFinishedAlertsInBoundedEntries(t *testing.T) {
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	day := 24 * time.Hour
	start := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(start.UnixMilli())
	now := func() time.Time { return time.UnixMilli(clock.Load()) }
	c := controltest.NewCluster(store, now)
	ctx := context.Background()
	apply := func(cmd *raftv1.Command) {
		t.Helper()
		if res, err := c.Apply(ctx, cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("apply %T: %v %v", cmd.GetOp(), res, err)
		}
	}
	apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: "acct", Email: "ops@example.com", Plan: &raftv1.Plan{Name: "free", IngestRatePerSecond: 5, IngestBurst: 10},
		IngestKey:     &raftv1.Key{Id: "ik", AccountId: "acct", Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "ik", Hash: []byte("hash-ik")},
		ManagementKey: &raftv1.Key{Id: "mk", AccountId: "acct", Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "mk", Hash: []byte("hash-mk")},
	}}})
	apply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: "acct", ChannelId: "ch", Type: "webhook", Name: "hook", IsDefault: true,
		ConfigJson: []byte(`{"url":"https://example.com/hook","secret":"whsec_c2VjcmV0"}`),
	}}})
	// raise fails n new monitors and returns the alerts raised.
	seen := map[string]bool{}
	raise := func(prefix string, n int) []string {
		t.Helper()
		var evs []*raftv1.Event
		for i := 0; i < n; i++ {
			evs = append(evs, &raftv1.Event{AccountId: "acct", Monitor: fmt.Sprint(prefix, i), EventType: "ping", Status: "fail", ReceivedUnixMs: clock.Load()})
		}
		apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: evs}}})
		pending, err := store.PendingAlerts(0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range pending {
			if !seen[a.GetId()] {
				seen[a.GetId()] = true
				ids = append(ids, a.GetId())
			}
		}
		return ids
	}
	record := func(ids []string, rec *raftv1.RecordDelivery) {
		for _, id := range ids {
			r := proto.Clone(rec).(*raftv1.RecordDelivery)
			r.AlertId, r.ChannelRef = id, "chan:ch"
			apply(&raftv1.Command{Op: &raftv1.Command_RecordDelivery{RecordDelivery: r}})
		}
	}
	old := raise("old-", 25)
	record(old[:20], &raftv1.RecordDelivery{Delivered: true})
	record(old[20:], &raftv1.RecordDelivery{GiveUp: true, Error: "410 Gone"})
	stuck := raise("stuck-", 2) // still retrying, 45 days on
	record(stuck, &raftv1.RecordDelivery{Error: "503", NextTryUnixMs: start.Add(50 * day).UnixMilli()})
	clock.Store(start.Add(40 * day).UnixMilli())
	young := raise("young-", 3)
	record(young, &raftv1.RecordDelivery{Delivered: true})
	clock.Store(start.Add(45 * day).UnixMilli())

	ca := &countingApplier{Applier: c}
	r := engine.NewRetention(engine.RetentionOptions{Cluster: ca, AlertMaxAge: 30 * day, BatchSize: 10, Now: now})
	n, err := r.SweepAlerts(ctx)
	if err != nil || n != 25 {
		t.Fatalf("sweep deleted %d alerts (%v), want 25", n, err)
	}
	if len(ca.entries) != 3 || ca.entries[0] != 10 {
		t.Errorf("sweep entries with max %v, want 3 of 10", ca.entries)
	}
	for _, id := range old {
		if _, err := store.Alert(id); !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("old finished alert %s kept: %v", id, err)
		}
	}
	for _, id := range append(stuck, young...) {
		if _, err := store.Alert(id); err != nil {
			t.Fatalf("alert %s: %v", id, err)
		}
	}
	if n, err := r.SweepAlerts(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep deleted %d (%v)", n, err)
	}
}
