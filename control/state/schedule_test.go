package state

import (
	"testing"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

func rfc(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

// TestScheduledPingMonitor: a ping monitor on a cron schedule in a zone is
// new and has no deadline before its first ping; after a ping its next run
// is expected at the schedule's first time after it, here across the
// Berlin spring switch (02:30 does not exist: expected at 03:00 CEST), late
// then, missed after the grace time, once; the next ping moves it to the
// next day's 02:30.
func TestScheduledPingMonitor(t *testing.T) {
	s := openStore(t)
	created := rfc("2026-03-27T18:00:00+01:00")
	grace := int64(600)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true), &raftv1.Command{Version: CommandVersion, TimeUnixMs: created,
		Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Creates: []*raftv1.MonitorSpec{{
			Uuid: "u1", Kind: KindPing, Name: "backup", Enabled: true, TimeoutSeconds: 3600, GraceSeconds: &grace,
			Schedule: "30 2 * * *", Timezone: "Europe/Berlin",
		}}}}})
	m := mustMonitor(t, s, "a", "backup")
	if m.GetTimezone() != "Europe/Berlin" || m.GetSchedule() != "30 2 * * *" {
		t.Fatalf("stored %q %q", m.GetSchedule(), m.GetTimezone())
	}
	if got, want := NextExpected(m), rfc("2026-03-28T02:30:00+01:00"); got != want {
		t.Fatalf("next expected before the first ping %v, want %v (first time after creation)", time.UnixMilli(got).UTC(), time.UnixMilli(want).UTC())
	}
	if to, late, missed := pingstate.Deadlines(PingSettings(m), PingState(m)); to != 0 || late != 0 || missed != 0 {
		t.Fatalf("a new scheduled monitor has deadlines %d %d %d", to, late, missed)
	}

	p := rfc("2026-03-28T02:31:00+01:00")
	ingestOK(t, s, ingestAt(p, 0, ping("a", "backup", "complete", p)))
	m = mustMonitor(t, s, "a", "backup")
	expected := rfc("2026-03-29T03:00:00+02:00")
	_, late, missed := pingstate.Deadlines(PingSettings(m), PingState(m))
	if late != expected || missed != expected+grace*1000 || NextExpected(m) != expected {
		t.Fatalf("late %v missed %v next %v, want %v + 10m", time.UnixMilli(late).UTC(), time.UnixMilli(missed).UTC(), time.UnixMilli(NextExpected(m)).UTC(), time.UnixMilli(expected).UTC())
	}
	mustOK(t, s, fireCmd("a", "u1", pingstate.DeadlineLate, late, late+10))
	if st := PingState(mustMonitor(t, s, "a", "backup")); st.State != pingstate.Late {
		t.Fatalf("state after the expected time %q", st.State)
	}
	mustOK(t, s, fireCmd("a", "u1", pingstate.DeadlineMissed, missed, missed+10))
	if res := apply(t, s, fireCmd("a", "u1", pingstate.DeadlineMissed, missed, missed+20))[0]; !res.GetStale() {
		t.Fatalf("missed twice: %v", res)
	}
	pending, _ := s.PendingAlerts(0)
	if len(pending) != 1 || pending[0].GetType() != pingstate.AlertMissed || pending[0].GetOccurredUnixMs() != missed {
		t.Fatalf("alerts %v", pending)
	}
	// Missed once: no deadline until the next ping.
	m = mustMonitor(t, s, "a", "backup")
	if _, late, missed := pingstate.Deadlines(PingSettings(m), PingState(m)); late != 0 || missed != 0 {
		t.Fatalf("deadlines after missed: %d %d", late, missed)
	}
	p = rfc("2026-03-29T03:20:00+02:00")
	ingestOK(t, s, ingestAt(p, 0, ping("a", "backup", "complete", p)))
	m = mustMonitor(t, s, "a", "backup")
	if _, late, _ := pingstate.Deadlines(PingSettings(m), PingState(m)); late != rfc("2026-03-30T02:30:00+02:00") {
		t.Fatalf("after the switch: late %v", time.UnixMilli(late).UTC())
	}
}
