package state

import (
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// dependent creates ping monitor name of account a depending on the test
// check ("site", an http_check), expected hourly.
func dependent(t *testing.T, s *Store, id, name string, deps ...*raftv1.Dependency) {
	t.Helper()
	mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{{Uuid: id, Kind: KindPing, Name: name, Enabled: true, TimeoutSeconds: 600,
		ExpectedIntervalSeconds: proto.Int64(3600), DependsOn: deps}}, nil))
}

var onSite = &raftv1.Dependency{Kind: KindHTTPCheck, Name: "site"}

// TestDependentHeldWhileItsDependencyIsDown: the check a ping monitor
// depends on fails (alerted); the ping monitor's failure is held by it
// (held_by the check); when the check recovers the leader's JudgeAfresh
// alerts the dependent, still failing, once.
func TestDependentHeldWhileItsDependencyIsDown(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	dependent(t, s, pingID, "app", onSite)
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)))
	requireAlerts(t, s, AlertCheckFailed)
	ingestOK(t, s, ingestAt(t0+70_000, 0, ping("a", "app", "fail", t0+70_000)))
	requireAlerts(t, s, AlertCheckFailed)
	if q := monitorByID(t, s, pingID).GetQuiet(); q.GetHeldBy() != HeldByDependency+checkID {
		t.Fatalf("quiet %v", q)
	}
	if res := apply(t, s, judgeCmd(t0+80_000, pingID))[0]; !res.GetStale() {
		t.Fatalf("judged while the dependency is down: %v", res)
	}
	mustOK(t, s, recordCmd(0, execution(t0+120_000, ExecSuccess)))
	requireAlerts(t, s, AlertCheckFailed, AlertCheckRecovered)
	mustOK(t, s, judgeCmd(t0+130_000, pingID))
	alerts := requireAlerts(t, s, AlertCheckFailed, pingstate.AlertFailed, AlertCheckRecovered)
	if a := alerts[1]; a.GetMonitorUuid() != pingID || a.GetOccurredUnixMs() != t0+70_000 {
		t.Fatalf("the dependent's alert %v", a)
	}
	mustOK(t, s, judgeCmd(t0+140_000, pingID))
	requireAlerts(t, s, AlertCheckFailed, pingstate.AlertFailed, AlertCheckRecovered)
}

// TestDependentThatRecoveredFirstSaysNothing: a dependent held by its
// dependency that recovers before it says nothing then or later; a
// dependent missing its run while held is alerted missed at once when the
// dependency recovers (its clock does not restart: the dependency's outage
// is no maintenance).
func TestDependentThatRecoveredFirstSaysNothing(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	dependent(t, s, pingID, "app", onSite)
	const other = "33333333-3333-4444-8555-666666666666"
	dependent(t, s, other, "worker", onSite)
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "worker", "complete", t0)))
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)))
	ingestOK(t, s, ingestAt(t0+70_000, 0, ping("a", "app", "fail", t0+70_000)))
	ingestOK(t, s, ingestAt(t0+80_000, 0, ping("a", "app", "complete", t0+80_000)))
	mustOK(t, s, fireCmd("a", other, pingstate.DeadlineMissed, t0+hour, t0+hour))
	if q := monitorByID(t, s, pingID).GetQuiet(); q.GetHeldBy() != "" {
		t.Fatalf("a dependent that recovered is still held: %v", q)
	}
	mustOK(t, s, recordCmd(0, execution(t0+hour+60_000, ExecSuccess)))
	mustOK(t, s, judgeCmd(t0+hour+70_000, pingID, other))
	alerts := requireAlerts(t, s, AlertCheckFailed, pingstate.AlertMissed, AlertCheckRecovered)
	if alerts[1].GetMonitorUuid() != other {
		t.Fatalf("missed alert of %s", alerts[1].GetMonitorUuid())
	}
}

// TestDanglingDependencyHoldsNothing: a dependency whose monitor was
// deleted holds nothing.
func TestDanglingDependencyHoldsNothing(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	putCheck(t, s, KindHTTPCheck, true, true)
	dependent(t, s, pingID, "app", onSite)
	mustOK(t, s, recordCmd(0, execution(t0+60_000, ExecFailed)))
	mustOK(t, s, deleteMonitor("a", checkID))
	ingestOK(t, s, ingestAt(t0+70_000, 0, ping("a", "app", "fail", t0+70_000)))
	requireAlerts(t, s, AlertCheckFailed, pingstate.AlertFailed)
	deps, err := s.Dependencies(monitorByID(t, s, pingID))
	if err != nil || len(deps) != 1 || deps[0].Monitor != nil || deps[0].Down {
		t.Fatalf("dependencies %+v %v", deps, err)
	}
}
