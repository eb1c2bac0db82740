package state

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// Builders and readers of the quiet-alert tests.

func pauseCmd(acct, id string, now, until int64, reason string) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_PauseMonitor{PauseMonitor: &raftv1.PauseMonitor{
		AccountId: acct, MonitorUuid: id, Pause: true, UntilUnixMs: until, Reason: reason}}})
}

func resumeCmd(acct, id string, now int64) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_PauseMonitor{PauseMonitor: &raftv1.PauseMonitor{AccountId: acct, MonitorUuid: id}}})
}

func judgeCmd(now int64, ids ...string) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_JudgeAfresh{JudgeAfresh: &raftv1.JudgeAfresh{MonitorUuids: ids}}})
}

// pingMonitor creates ping monitor name of account a, expected every
// intervalSec with graceSec, its runs timing out after timeoutSec.
func pingMonitor(t *testing.T, s *Store, id, name string, intervalSec, graceSec, timeoutSec int64) {
	t.Helper()
	mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: id, Kind: KindPing, Name: name, Enabled: true, TimeoutSeconds: timeoutSec,
		ExpectedIntervalSeconds: proto.Int64(intervalSec), GraceSeconds: proto.Int64(graceSec)}}, nil))
}

// allAlerts lists every alert of the outbox (pending or not), in the order
// they were raised.
func allAlerts(t *testing.T, s *Store) []*statev1.Alert {
	t.Helper()
	var out []*statev1.Alert
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixAlert, func() *statev1.Alert { return new(statev1.Alert) }, func(a *statev1.Alert) error {
			out = append(out, a)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b *statev1.Alert) int {
		if c := cmpInt(a.GetOccurredUnixMs(), b.GetOccurredUnixMs()); c != 0 {
			return c
		}
		return cmpInt(int64(len(a.GetType())), int64(len(b.GetType())))
	})
	return out
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// typesOf lists the alerts' types.
func typesOf(alerts []*statev1.Alert) []string {
	var out []string
	for _, a := range alerts {
		out = append(out, a.GetType())
	}
	return out
}

func requireAlerts(t *testing.T, s *Store, want ...string) []*statev1.Alert {
	t.Helper()
	got := allAlerts(t, s)
	if !slices.Equal(typesOf(got), want) {
		t.Fatalf("alerts %v, want %v", typesOf(got), want)
	}
	return got
}

func monitorByID(t *testing.T, s *Store, id string) *statev1.Monitor {
	t.Helper()
	m, err := s.MonitorByUUID(id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const pingID = "22222222-3333-4444-8555-666666666666"

// TestPausedPingMonitorTimesOutQuietly: a paused ping monitor records its
// pings and its run times out, but nothing is alerted; it is held by the
// pause. Resuming judges it afresh: the run's timeout counts from the
// resume, and fires then, once.
func TestPausedPingMonitorTimesOutQuietly(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	pingMonitor(t, s, pingID, "backup", 3600, 0, 600)
	mustOK(t, s, pauseCmd("a", pingID, t0, 0, "deploying"))
	ingestOK(t, s, ingestAt(t0+second, 0, ping("a", "backup", "run", t0+second)))
	res := apply(t, s, fireCmd("a", pingID, pingstate.DeadlineTimeout, t0+second+600*second, t0+second+600*second))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK || res.GetStale() {
		t.Fatalf("fire: %v", res)
	}
	requireAlerts(t, s)
	m := monitorByID(t, s, pingID)
	if st := PingState(m); st.State != pingstate.Down || st.Alerting {
		t.Fatalf("engine state %+v", st)
	}
	if q := m.GetQuiet(); q.GetHeldBy() != HeldByPause || !q.GetPaused() || q.GetPauseReason() != "deploying" || q.GetDownSinceUnixMs() == 0 {
		t.Fatalf("quiet %v", q)
	}

	resumeAt := t0 + 2*hour
	mustOK(t, s, resumeCmd("a", pingID, resumeAt))
	requireAlerts(t, s) // the clock restarts: nothing at the resume
	m = monitorByID(t, s, pingID)
	timeout, _, _ := pingstate.Deadlines(PingSettings(m), PingState(m))
	if timeout != resumeAt+600*second || m.GetQuiet().GetPaused() || m.GetQuiet().GetHeldBy() != "" {
		t.Fatalf("after the resume: timeout at %d (want %d), quiet %v", timeout, resumeAt+600*second, m.GetQuiet())
	}
	mustOK(t, s, fireCmd("a", pingID, pingstate.DeadlineTimeout, timeout, timeout))
	requireAlerts(t, s, pingstate.AlertTimeout)
}

// TestPausedCheckAlertsOnceWhenResumed: a paused check's failures are
// held; resuming while it still fails alerts check.failed once, and the
// next failure adds nothing.
func TestPausedCheckAlertsOnceWhenResumed(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	mustOK(t, s, pauseCmd("a", checkID, t0, 0, ""))
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)), recordCmd(0, execution(t0+120_000, ExecFailed)))
	requireAlerts(t, s)
	if cs := checkStatus(t, s); cs.GetVerdict() != ExecFailed || cs.GetAlert() != "" {
		t.Fatalf("check status %v", cs)
	}
	mustOK(t, s, resumeCmd("a", checkID, t0+130_000))
	alerts := requireAlerts(t, s, AlertCheckFailed)
	if alerts[0].GetExecution().GetSlotUnixMs() != t0+120_000 {
		t.Fatalf("the alert carries %v, want the newest verdict's execution", alerts[0].GetExecution())
	}
	mustOK(t, s, recordCmd(0, execution(t0+180_000, ExecFailed)))
	requireAlerts(t, s, AlertCheckFailed)
	mustOK(t, s, recordCmd(0, execution(t0+240_000, ExecSuccess)))
	requireAlerts(t, s, AlertCheckFailed, AlertCheckRecovered)
}

// TestPauseHeldFailureThatRecoveredTellsNothing: a check that failed and
// recovered while paused alerts nothing at the resume; one whose failure
// was sent before the pause and that recovered during it alerts the
// recovery at the resume.
func TestPauseHeldFailureThatRecoveredTellsNothing(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	mustOK(t, s, pauseCmd("a", checkID, t0, 0, ""))
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)), recordCmd(0, execution(t0+120_000, ExecSuccess)))
	if q := monitorByID(t, s, checkID).GetQuiet(); q.GetHeldBy() != "" || q.GetDownSinceUnixMs() != 0 {
		t.Fatalf("a held failure that recovered is still held: %v", q)
	}
	mustOK(t, s, resumeCmd("a", checkID, t0+130_000))
	requireAlerts(t, s)

	mustOK(t, s, recordCmd(0, execution(t0+180_000, ExecFailed)))
	requireAlerts(t, s, AlertCheckFailed)
	mustOK(t, s, pauseCmd("a", checkID, t0+190_000, 0, ""))
	mustOK(t, s, recordCmd(0, execution(t0+240_000, ExecSuccess)))
	requireAlerts(t, s, AlertCheckFailed)
	mustOK(t, s, resumeCmd("a", checkID, t0+250_000))
	requireAlerts(t, s, AlertCheckFailed, AlertCheckRecovered)
}

// TestPausedPingFailureAlertsOnceWhenResumed: a fail while paused is held;
// at the resume the monitor still fails and alerts monitor.failed once.
func TestPausedPingFailureAlertsOnceWhenResumed(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	pingMonitor(t, s, pingID, "backup", 3600, 0, 600)
	mustOK(t, s, pauseCmd("a", pingID, t0, 0, ""))
	ingestOK(t, s, ingestAt(t0+second, 0, ping("a", "backup", "fail", t0+second), ping("a", "backup", "fail", t0+2*second)))
	requireAlerts(t, s)
	mustOK(t, s, resumeCmd("a", pingID, t0+hour))
	requireAlerts(t, s, pingstate.AlertFailed)
	ingestOK(t, s, ingestAt(t0+hour+second, 0, ping("a", "backup", "complete", t0+hour+second)))
	requireAlerts(t, s, pingstate.AlertFailed, pingstate.AlertRecovered)
}

// TestPauseUntilEndsByJudgeAfresh: a pause with an until holds until the
// leader's JudgeAfresh at or after it; one before changes nothing (stale),
// twice changes nothing more.
func TestPauseUntilEndsByJudgeAfresh(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	until := t0 + hour
	mustOK(t, s, pauseCmd("a", checkID, t0, until, ""))
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)))
	if res := apply(t, s, judgeCmd(until-1, checkID))[0]; !res.GetStale() {
		t.Fatalf("judged before until: %v", res)
	}
	requireAlerts(t, s)
	if res := apply(t, s, judgeCmd(until, checkID, "no-such-monitor"))[0]; res.GetStatus() != raftv1.Status_STATUS_OK || res.GetStale() {
		t.Fatalf("judged at until: %v", res)
	}
	requireAlerts(t, s, AlertCheckFailed)
	if q := monitorByID(t, s, checkID).GetQuiet(); q.GetPaused() || q.GetHeldBy() != "" {
		t.Fatalf("quiet %v", q)
	}
	if res := apply(t, s, judgeCmd(until+1, checkID))[0]; !res.GetStale() {
		t.Fatalf("judged again: %v", res)
	}
	requireAlerts(t, s, AlertCheckFailed)
}

// TestPauseCommandRules: another account's monitor is not found; a
// resume of a monitor not paused changes nothing; a reason over its bound
// is refused; pausing again replaces until and reason and keeps paused_at.
func TestPauseCommandRules(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	putCheck(t, s, KindHTTPCheck, true, true)
	if res := apply(t, s, pauseCmd("b", checkID, t0, 0, ""))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("another account's: %v", res)
	}
	before := dumpKV(t, s, false)
	mustOK(t, s, resumeCmd("a", checkID, t0))
	requireSameKV(t, before, dumpKV(t, s, false))
	if res := apply(t, s, pauseCmd("a", checkID, t0, 0, long(MaxPauseReason+1)))[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("long reason: %v", res)
	}
	mustOK(t, s, pauseCmd("a", checkID, t0, t0+hour, "one"), pauseCmd("a", checkID, t0+second, t0+2*hour, "two"))
	q := monitorByID(t, s, checkID).GetQuiet()
	if !q.GetPaused() || q.GetPausedUntilUnixMs() != t0+2*hour || q.GetPauseReason() != "two" || q.GetPausedAtUnixMs() != t0 {
		t.Fatalf("quiet %v", q)
	}
	if m := monitorByID(t, s, checkID); m.GetUpdatedUnixMs() != t0 {
		t.Fatalf("a pause moved updated_unix_ms: %d", m.GetUpdatedUnixMs())
	}
}

func pauseWorstCase() worstCase {
	return worstCase{
		// Resuming an ssl_check of an account with the most channels that
		// failed while paused: one alert with a delivery per channel.
		setup: func(t *testing.T, s *Store) {
			for i := range MaxAccountChannels {
				mustOK(t, s, createChannelCmd("a", fmt.Sprint("c", i), true))
			}
			putCheck(t, s, KindSSLCheck, true, true)
			mustOK(t, s, pauseCmd("a", checkID, t0, 0, wide(MaxPauseReason/4)))
			mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)))
		},
		worst: func(*testing.T, *Store) *raftv1.Command { return resumeCmd("a", checkID, t0+120_000) },
		want:  raftv1.Status_STATUS_OK,
		over:  pauseCmd("a", long(MaxKeyPartBytes+1), t0, 0, ""),
	}
}

func judgeWorstCase() worstCase {
	id := func(i int) string { return fmt.Sprintf("50000000-0000-4000-8000-%012d", i) }
	return worstCase{
		// MaxJudgeAfresh ssl_checks of an account with the most channels,
		// each failed while paused until t0+1h: each resumed with an
		// alert with a delivery per channel.
		setup: func(t *testing.T, s *Store) {
			for i := range MaxAccountChannels {
				mustOK(t, s, createChannelCmd("a", fmt.Sprint("c", i), true))
			}
			for i := range MaxJudgeAfresh {
				mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: id(i), Kind: KindSSLCheck, Name: fmt.Sprint("cert-", i), Enabled: true, Schedule: "1m",
					Config: &raftv1.CheckConfig{Domain: "example.com", WarningDays: 30, AlertDays: 7}}}, nil))
				mustOK(t, s, pauseCmd("a", id(i), t0, t0+hour, wide(MaxPauseReason/4)))
				e := &raftv1.Execution{AccountId: "a", CheckUuid: id(i), Region: RegionControl, SlotUnixMs: t0 + 60_000, Status: ExecFailed, Attempts: 4,
					Error: long(MaxExecutionError), Ssl: &raftv1.ExecutionSSL{Issuer: long(MaxExecutionText), Subject: long(MaxExecutionText), DaysLeft: 1}}
				mustOK(t, s, recordCmd(0, e))
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			ids := make([]string, MaxJudgeAfresh)
			for i := range ids {
				ids[i] = id(i)
			}
			return judgeCmd(t0+hour, ids...)
		},
		want: raftv1.Status_STATUS_OK,
		over: judgeCmd(t0, long(MaxKeyPartBytes+1)),
	}
}
