package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/internal/bench"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// zones are the zones scheduled monitors cycle through: both hemispheres,
// half-hour and quarter-hour offsets, and UTC.
var zones = []string{"UTC", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata",
	"Asia/Kathmandu", "America/St_Johns", "Pacific/Chatham", "America/Los_Angeles", "Asia/Tokyo"}

func scheduleLabel(sched string) string {
	switch {
	case sched == "interval":
		return "expected_interval_seconds 60"
	case strings.ContainsAny(sched, " @"):
		return fmt.Sprintf("schedule %q in %d zones", sched, len(zones))
	}
	return fmt.Sprintf("schedule %q", sched)
}

// lateDeadlines is how many of n scheduled monitors have a late deadline
// (a grace time above 0).
func lateDeadlines(n int) int {
	late := 0
	for j := range n {
		if int64(j)*60/int64(n) > 0 {
			late++
		}
	}
	return late
}

// setupScheduled makes an account without limits and n ping monitors on
// sched ("interval": expected_interval_seconds 60), monitor i with
// grace i*60/n s (whole seconds), and pings them all at ping.
func setupScheduled(ctx context.Context, c *bench.Direct, n int, ping time.Time, sched string) (string, error) {
	acct, err := benchAccount(ctx, c)
	if err != nil {
		return "", err
	}
	name := func(i int) string { return fmt.Sprintf("job-%06d", i) }
	for i := 0; i < n; i += 1000 {
		put := &raftv1.PutMonitors{AccountId: acct}
		for j := i; j < min(n, i+1000); j++ {
			s := &raftv1.MonitorSpec{Uuid: uuid.NewString(), Kind: "ping", Name: name(j), Enabled: true, TimeoutSeconds: 3600,
				GraceSeconds: proto.Int64(int64(j) * 60 / int64(n))}
			switch {
			case sched == "interval":
				s.ExpectedIntervalSeconds = proto.Int64(int64(interval / time.Second))
			case strings.ContainsAny(sched, " @"):
				s.Schedule, s.Timezone = sched, zones[j%len(zones)]
			default:
				s.Schedule = sched
			}
			put.Creates = append(put.Creates, s)
		}
		if err := c.Must(ctx, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: put}}); err != nil {
			return "", err
		}
	}
	for i := 0; i < n; i += 256 {
		batch := &raftv1.IngestBatch{RetentionCount: 100}
		for j := i; j < min(n, i+256); j++ {
			batch.Events = append(batch.Events, &raftv1.Event{AccountId: acct, Monitor: name(j), EventType: "ping", Status: "complete", ReceivedUnixMs: ping.UnixMilli()})
		}
		if err := c.Must(ctx, &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: batch}}); err != nil {
			return "", err
		}
	}
	return acct, nil
}
