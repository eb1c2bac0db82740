package state

import (
	"fmt"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

func putWindowCmd(now int64, create bool, w *raftv1.MaintenanceWindow) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_PutMaintenanceWindow{PutMaintenanceWindow: &raftv1.PutMaintenanceWindow{Window: w, Create: create}}})
}

func deleteWindowCmd(now int64, acct, id string) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_DeleteMaintenanceWindow{DeleteMaintenanceWindow: &raftv1.DeleteMaintenanceWindow{AccountId: acct, Id: id}}})
}

// oneOff is window id of account a from start to end matching match.
func oneOff(id string, start, end int64, match *raftv1.WindowMatch) *raftv1.MaintenanceWindow {
	return &raftv1.MaintenanceWindow{Id: id, AccountId: "a", Name: "patching", StartsUnixMs: start, EndsUnixMs: end, Match: match}
}

// TestWindowHoldsAFailingCheckAndAlertsOnceAtItsEnd: a check failing in a
// window raises nothing (held by it) while its executions are recorded; a
// JudgeAfresh before the end changes nothing; one at the end alerts
// check.failed once; the next failure adds nothing.
func TestWindowHoldsAFailingCheckAndAlertsOnceAtItsEnd(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	end := t0 + hour
	mustOK(t, s, putWindowCmd(t0, true, oneOff("w1", t0, end, nil)))
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)), recordCmd(0, execution(t0+120_000, ExecFailed)))
	requireAlerts(t, s)
	if q := monitorByID(t, s, checkID).GetQuiet(); q.GetHeldBy() != HeldByMaintenance+"w1" {
		t.Fatalf("quiet %v", q)
	}
	if res := apply(t, s, judgeCmd(end-1, checkID))[0]; !res.GetStale() {
		t.Fatalf("judged inside the window: %v", res)
	}
	mustOK(t, s, judgeCmd(end, checkID))
	requireAlerts(t, s, AlertCheckFailed)
	mustOK(t, s, recordCmd(0, execution(end+60_000, ExecFailed)))
	requireAlerts(t, s, AlertCheckFailed)
}

// TestWindowMatchesByTagOnly: a window matching tag db holds the tagged
// check; a check without the tag alerts as usual.
func TestWindowMatchesByTagOnly(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	const other = "99999999-2222-4333-8444-555555555555"
	spec := func(id, name string, tags ...string) *raftv1.MonitorSpec {
		return &raftv1.MonitorSpec{Uuid: id, Kind: KindHTTPCheck, Name: name, Enabled: true, Schedule: "1m", Tags: tags,
			Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}}
	}
	mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{spec(checkID, "db", "db"), spec(other, "web", "web")}, nil))
	mustOK(t, s, putWindowCmd(t0, true, oneOff("w1", t0, t0+hour, &raftv1.WindowMatch{Tags: []string{"db", "no-such-tag"}})))
	failed := execution(t0+60_000, ExecFailed)
	failedOther := execution(t0+60_000, ExecFailed)
	failedOther.CheckUuid = other
	mustOK(t, s, recordCmd(0, failed, failedOther))
	alerts := requireAlerts(t, s, AlertCheckFailed)
	if alerts[0].GetMonitorUuid() != other {
		t.Fatalf("the alert is %s's", alerts[0].GetMonitorUuid())
	}
}

// TestPingMissedInAWindowCountsFromItsEnd: a ping monitor missing its run
// in a window is not alerted; at the end its next run is expected from the
// end, and missed then, once.
func TestPingMissedInAWindowCountsFromItsEnd(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	pingMonitor(t, s, pingID, "backup", 600, 60, 60)
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "backup", "complete", t0)))
	end := t0 + hour
	mustOK(t, s, putWindowCmd(t0, true, oneOff("w1", t0, end, &raftv1.WindowMatch{Monitors: []string{pingID}})))
	due := t0 + 660*second
	mustOK(t, s, fireCmd("a", pingID, pingstate.DeadlineMissed, due, due))
	requireAlerts(t, s)
	mustOK(t, s, judgeCmd(end, pingID))
	requireAlerts(t, s)
	m := monitorByID(t, s, pingID)
	_, _, missed := pingstate.Deadlines(PingSettings(m), PingState(m))
	if missed != end+660*second {
		t.Fatalf("missed deadline at +%d s, want the end + 660 s", (missed-t0)/second)
	}
	mustOK(t, s, fireCmd("a", pingID, pingstate.DeadlineMissed, missed, missed))
	requireAlerts(t, s, pingstate.AlertMissed)
}

// TestRecurringWindowHoldsEveryOccurrence: a daily window at 02:00 for an
// hour in Berlin holds a failure at 02:30 local, not one at 03:30.
func TestRecurringWindowHoldsEveryOccurrence(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	mustOK(t, s, putWindowCmd(t0, true, &raftv1.MaintenanceWindow{Id: "w1", AccountId: "a", Name: "nightly", Schedule: "0 2 * * *", Timezone: "Europe/Berlin", DurationSeconds: 3600}))
	// 2026-03-16 02:30 Berlin is 01:30 UTC.
	inside := int64(1773624600000)
	e := execution(inside, ExecFailed)
	mustOK(t, s, cmd(&raftv1.Command{TimeUnixMs: inside + 200, Op: recordCmd(0, e).GetOp()}))
	requireAlerts(t, s)
	after := inside + hour
	e2 := execution(after, ExecFailed)
	mustOK(t, s, cmd(&raftv1.Command{TimeUnixMs: after + 200, Op: recordCmd(0, e2).GetOp()}))
	requireAlerts(t, s, AlertCheckFailed)
}

// TestMaintenanceWindowCommandRules: creating an existing id conflicts,
// replacing an unknown one is not found, the 101st is refused with its
// code, a malformed one is invalid, deleting twice is not found.
func TestMaintenanceWindowCommandRules(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	w := oneOff("w1", t0, t0+hour, nil)
	mustOK(t, s, putWindowCmd(t0, true, w))
	if res := apply(t, s, putWindowCmd(t0, true, oneOff("w1", t0, t0+hour, nil)))[0]; res.GetStatus() != raftv1.Status_STATUS_CONFLICT {
		t.Fatalf("create again: %v", res)
	}
	if res := apply(t, s, putWindowCmd(t0, false, oneOff("w2", t0, t0+hour, nil)))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("replace unknown: %v", res)
	}
	if res := apply(t, s, putWindowCmd(t0, true, oneOff("w3", t0+hour, t0, nil)))[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("ends before it starts: %v", res)
	}
	if res := apply(t, s, putWindowCmd(t0, true, &raftv1.MaintenanceWindow{Id: "w3", AccountId: "a", Name: "x", Schedule: "0 0 30 2 *", DurationSeconds: 60}))[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("a schedule that never fires: %v", res)
	}
	if res := apply(t, s, putWindowCmd(t0, true, oneOff("w3", t0, t0+hour, nil)))[0]; res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create: %v", res)
	}
	replaced := oneOff("w1", t0, t0+2*hour, nil)
	mustOK(t, s, putWindowCmd(t0+second, false, replaced))
	got, err := s.MaintenanceWindow("a", "w1")
	if err != nil || got.GetEndsUnixMs() != t0+2*hour || got.GetCreatedUnixMs() != t0 || got.GetUpdatedUnixMs() != t0+second {
		t.Fatalf("replaced: %v %v", got, err)
	}
	for i := 2; i < MaxMaintenanceWindows; i++ {
		mustOK(t, s, putWindowCmd(t0, true, oneOff(fmt.Sprint("x", i), t0, t0+hour, nil)))
	}
	if res := apply(t, s, putWindowCmd(t0, true, oneOff("one-more", t0, t0+hour, nil)))[0]; res.GetCode() != CodeWindowLimitReached {
		t.Fatalf("over the limit: %v", res)
	}
	mustOK(t, s, deleteWindowCmd(t0, "a", "w1"))
	if res := apply(t, s, deleteWindowCmd(t0, "a", "w1"))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("delete again: %v", res)
	}
}

func putWindowWorstCase() worstCase {
	return worstCase{
		// The account at its last window, a window of the longest match.
		setup: func(t *testing.T, s *Store) {
			for i := 1; i < MaxMaintenanceWindows; i++ {
				mustOK(t, s, putWindowCmd(t0, true, oneOff(fmt.Sprint("x", i), t0, t0+hour, nil)))
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			m := &raftv1.WindowMatch{}
			for i := range 100 {
				m.Monitors = append(m.Monitors, fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
				m.Tags = append(m.Tags, wide(64))
				m.Projects = append(m.Projects, wide(100))
			}
			w := oneOff(long(MaxKeyPartBytes), t0, t0+hour, m)
			w.Name = wide(255)
			return putWindowCmd(t0, true, w)
		},
		want: raftv1.Status_STATUS_OK,
		over: putWindowCmd(t0, true, oneOff(long(MaxKeyPartBytes+1), t0, t0+hour, nil)),
	}
}

func deleteWindowWorstCase() worstCase {
	return worstCase{
		setup:    func(t *testing.T, s *Store) { mustOK(t, s, putWindowCmd(t0, true, oneOff("w1", t0, t0+hour, nil))) },
		worst:    func(*testing.T, *Store) *raftv1.Command { return deleteWindowCmd(t0, "a", "w1") },
		want:     raftv1.Status_STATUS_OK,
		over:     deleteWindowCmd(t0, "a", long(MaxKeyPartBytes+1)),
		overCode: "",
	}
}
