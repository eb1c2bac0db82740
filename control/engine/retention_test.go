package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/engine"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestRetentionDeletesOnlyOldEventsInBoundedEntries(t *testing.T) {
	srv := controltest.NewServer(t)
	ctx := context.Background()
	acct, err := srv.API.CreateAccount(ctx, admin.AccountRequest{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	day := 24 * time.Hour
	old, recent := srv.Now.Add(-100*day), srv.Now.Add(-day)
	var events []*raftv1.Event
	for i := 0; i < 25; i++ {
		events = append(events, &raftv1.Event{AccountId: acct.ID, Monitor: "job", EventType: "ping", Status: "complete", ReceivedUnixMs: old.UnixMilli() + int64(i)})
	}
	for i := 0; i < 5; i++ {
		events = append(events, &raftv1.Event{AccountId: acct.ID, Monitor: "job", EventType: "ping", Status: "complete", ReceivedUnixMs: recent.UnixMilli() + int64(i), EventId: fmt.Sprint("recent-", i)})
	}
	if _, err := srv.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{Events: events, RetentionCount: 1000}}}); err != nil {
		t.Fatal(err)
	}
	r := engine.NewRetention(engine.RetentionOptions{Cluster: srv.Cluster, MaxAge: 90 * day, BatchSize: 10, Now: func() time.Time { return srv.Now }})
	n, err := r.Sweep(ctx)
	if err != nil || n != 25 {
		t.Fatalf("sweep deleted %d (%v), want 25", n, err)
	}
	m, err := srv.Store.MonitorByName(acct.ID, "ping", "job")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := srv.Store.Events(acct.ID, m.GetUuid(), 0)
	if err != nil || len(kept) != 5 {
		t.Fatalf("%d events kept (%v), want the 5 recent ones", len(kept), err)
	}
	for _, e := range kept {
		if e.GetEvent().GetReceivedUnixMs() < recent.UnixMilli() {
			t.Fatalf("an old event survived: %v", e)
		}
	}
	if n, err := r.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep deleted %d (%v)", n, err)
	}
}

func TestRetentionStopsOnAFailedEntry(t *testing.T) {
	srv := controltest.NewServer(t)
	srv.Cluster.FailApply(fmt.Errorf("no leader"))
	r := engine.NewRetention(engine.RetentionOptions{Cluster: srv.Cluster})
	if _, err := r.Sweep(context.Background()); err == nil {
		t.Fatal("a failed apply went unnoticed")
	}
}
