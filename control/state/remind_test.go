package state

import (
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// putThresholdCheck creates (or replaces) the test check with a failure
// threshold and a reminder period (0: none).
func putThresholdCheck(t *testing.T, s *Store, threshold, remind int64, create bool) {
	t.Helper()
	spec := &raftv1.MonitorSpec{Uuid: checkID, Kind: KindHTTPCheck, Name: "site", Enabled: true, Schedule: "1m",
		Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}}
	if threshold > 0 {
		spec.FailureThreshold = proto.Int64(threshold)
	}
	if remind > 0 {
		spec.RemindEverySeconds = proto.Int64(remind)
	}
	if create {
		mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{spec}, nil))
	} else {
		mustOK(t, s, putMonitorsCmd("a", nil, []*raftv1.MonitorSpec{spec}))
	}
}

// TestFailureThresholdAlertsOnTheSecondFailedSlot: with failure_threshold
// 2, one failed slot alerts nothing (and a success after it nothing), two
// in a row alert check.failed on the second; a repeat of the same slot (a
// second region, a retried write) does not count twice.
func TestFailureThresholdAlertsOnTheSecondFailedSlot(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putThresholdCheck(t, s, 2, 0, true)
	slot := func(i int64) int64 { return t0 + i*60_000 }
	mustOK(t, s, recordCmd(0, execution(slot(1), ExecFailed)))
	requireAlerts(t, s)
	mustOK(t, s, recordCmd(0, execution(slot(2), ExecSuccess)))
	requireAlerts(t, s)
	mustOK(t, s, recordCmd(0, execution(slot(3), ExecFailed)))
	requireAlerts(t, s)
	if m := monitorByID(t, s, checkID); m.GetQuiet().GetDownSinceUnixMs() != 0 {
		t.Fatalf("a check below its threshold is down: %v", m.GetQuiet())
	}
	mustOK(t, s, recordCmd(0, execution(slot(4), ExecFailed)))
	alerts := requireAlerts(t, s, AlertCheckFailed)
	if alerts[0].GetExecution().GetSlotUnixMs() != slot(4) {
		t.Fatalf("alerted for %v", alerts[0].GetExecution())
	}
	mustOK(t, s, recordCmd(0, execution(slot(5), ExecFailed)), recordCmd(0, execution(slot(6), ExecSuccess)))
	alerts = requireAlerts(t, s, AlertCheckFailed, AlertCheckRecovered)
	if d := alerts[1].GetDownSeconds(); alerts[1].DownSeconds == nil || d != (slot(6)+100-(slot(4)+100))/1000 {
		t.Fatalf("down_seconds %v, want the time since the alerted failure", alerts[1].DownSeconds)
	}
}

// TestRemindersWhileDown: a ping monitor with remind_every_seconds 300 that
// failed sends monitor.reminder every 300 s (naming the failure alert and
// when it went down), not in between, not inside a maintenance window; its
// recovery carries down_seconds, and no reminder follows it.
func TestRemindersWhileDown(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: pingID, Kind: KindPing, Name: "backup", Enabled: true, TimeoutSeconds: 600,
		RemindEverySeconds: proto.Int64(300)}}, nil))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "backup", "fail", t0)))
	failed := requireAlerts(t, s, pingstate.AlertFailed)[0]
	m := monitorByID(t, s, pingID)
	if next := m.GetQuiet().GetNextReminderUnixMs(); next != t0+300*second {
		t.Fatalf("next reminder at +%d s", (next-t0)/second)
	}
	if res := apply(t, s, judgeCmd(t0+299*second, pingID))[0]; !res.GetStale() {
		t.Fatalf("judged before the reminder: %v", res)
	}
	mustOK(t, s, judgeCmd(t0+300*second, pingID))
	alerts := requireAlerts(t, s, pingstate.AlertFailed, AlertMonitorReminder)
	if r := alerts[1]; r.GetOriginalAlertId() != failed.GetId() || r.GetDownSinceUnixMs() != t0 || r.GetOccurredUnixMs() != t0+300*second {
		t.Fatalf("reminder %v", r)
	}
	// In a window the reminder is skipped, and the next one is a period later.
	mustOK(t, s, putWindowCmd(t0+500*second, true, oneOff("w1", t0+500*second, t0+700*second, nil)))
	mustOK(t, s, judgeCmd(t0+600*second, pingID))
	requireAlerts(t, s, pingstate.AlertFailed, AlertMonitorReminder)
	if next := monitorByID(t, s, pingID).GetQuiet().GetNextReminderUnixMs(); next != t0+900*second {
		t.Fatalf("next reminder at +%d s", (next-t0)/second)
	}
	ingestOK(t, s, ingestAt(t0+800*second, 0, ping("a", "backup", "complete", t0+800*second)))
	alerts = requireAlerts(t, s, pingstate.AlertFailed, AlertMonitorReminder, pingstate.AlertRecovered)
	if r := alerts[2]; r.DownSeconds == nil || r.GetDownSeconds() != 800 || r.GetDownSinceUnixMs() != t0 {
		t.Fatalf("recovery %v", r)
	}
	if q := monitorByID(t, s, pingID).GetQuiet(); q.GetNextReminderUnixMs() != 0 || q.GetAlertId() != "" {
		t.Fatalf("quiet after the recovery %v", q)
	}
}

// TestReminderPeriodChangedCountsFromNow: setting remind_every_seconds on
// a check whose failure alert stands schedules its first reminder a period
// after the change; removing it cancels them.
func TestReminderPeriodChangedCountsFromNow(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putThresholdCheck(t, s, 0, 0, true)
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)))
	requireAlerts(t, s, AlertCheckFailed)
	change := func(now, remind int64) {
		c := putMonitorsCmd("a", nil, []*raftv1.MonitorSpec{{Uuid: checkID, Kind: KindHTTPCheck, Name: "site", Enabled: true, Schedule: "1m",
			Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}}})
		if remind > 0 {
			c.GetPutMonitors().GetUpdates()[0].RemindEverySeconds = proto.Int64(remind)
		}
		c.TimeUnixMs = now
		mustOK(t, s, c)
	}
	change(t0+hour, 3600)
	if next := monitorByID(t, s, checkID).GetQuiet().GetNextReminderUnixMs(); next != t0+2*hour {
		t.Fatalf("next reminder at +%d s", (next-t0)/second)
	}
	mustOK(t, s, judgeCmd(t0+2*hour, checkID))
	requireAlerts(t, s, AlertCheckFailed, AlertCheckReminder)
	change(t0+3*hour, 0)
	if next := monitorByID(t, s, checkID).GetQuiet().GetNextReminderUnixMs(); next != 0 {
		t.Fatalf("a reminder after the period was removed: %d", next)
	}
}
