package engine_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// scheduled creates ping monitor name on a cron schedule in zone.
func (h *harness) scheduled(name, spec, zone string, graceSec int64) string {
	id := uuid.NewString()
	h.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: h.acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: id, Kind: "ping", Name: name, Enabled: true, TimeoutSeconds: 600, GraceSeconds: proto.Int64(graceSec),
		Schedule: spec, Timezone: zone,
	}}}}})
	return id
}

// TestScheduledMonitorIsMissedAfterTheNextMinutePlusGrace: a "* * * * *"
// monitor in a zone 5:45 ahead of UTC, pinged once at 12:30:17, is late at
// 12:31:00 and missed at 12:31:10 (10 s of grace), once; a new leader's
// rebuild does not fire it again, and there is no deadline before the
// first ping.
func TestScheduledMonitorIsMissedAfterTheNextMinutePlusGrace(t *testing.T) {
	h := newHarness(t)
	id := h.scheduled("every-minute", "* * * * *", "Asia/Kathmandu", 10)
	first, stop := h.start()
	waitFor(t, "the first rebuild", func() bool { return first.Stats().Scheduled == 0 })
	settle()
	if s := first.Stats(); s.Scheduled != 0 {
		t.Fatalf("a scheduled monitor without a ping has deadlines: %+v", s)
	}
	stop()

	h.clock.Advance(17 * time.Second)
	h.ping("every-minute", "complete")
	late, missed := h.t0.Add(time.Minute), h.t0.Add(time.Minute+10*time.Second)
	e, stop := h.start()
	waitFor(t, "the late deadline", func() bool { return h.clock.waiting(late) })
	h.clock.Advance(late.Sub(h.clock.Now()))
	waitFor(t, "late", func() bool { return h.engineState(id).GetState() == pingstate.Late })
	waitFor(t, "the missed deadline", func() bool { return h.clock.waiting(missed) })
	h.clock.Advance(9 * time.Second)
	settle()
	if st := h.engineState(id); st.GetMissedFired() {
		t.Fatalf("missed before the grace time ran out: %v", st)
	}
	h.clock.Advance(time.Second)
	waitFor(t, "missed", func() bool { return h.engineState(id).GetMissedFired() })
	alerts, err := h.store.PendingAlerts(0)
	if err != nil || len(alerts) != 1 || alerts[0].GetType() != pingstate.AlertMissed || alerts[0].GetOccurredUnixMs() != missed.UnixMilli() {
		t.Fatalf("alerts: %v %v", alerts, err)
	}
	waitFor(t, "an empty heap", func() bool { return e.Stats().Scheduled == 0 })
	stop()

	h.clock.Advance(5 * time.Minute)
	again, _ := h.start()
	settle()
	if s := again.Stats(); s.Fired != 0 || s.Scheduled != 0 {
		t.Fatalf("a new leader fired the missed run again: %+v", s)
	}
	if alerts, _ := h.store.PendingAlerts(0); len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(alerts))
	}
}
