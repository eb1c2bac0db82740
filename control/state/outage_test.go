package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

func aliveCmd(now int64, termStart bool) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_MarkAlive{MarkAlive: &raftv1.MarkAlive{TermStart: termStart, OutageAfterMs: 30_000}}})
}

// TestOutagesAreTermStartsAfterAGap: only a term that starts more than
// outage_after_ms after the last mark records an outage (from that mark
// to its start); marks within a term, a failover within the bound and the
// very first term record none.
func TestOutagesAreTermStartsAfterAGap(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, aliveCmd(t0, true))                 // the first term ever: nothing to compare with
	mustOK(t, s, aliveCmd(t0+hour, false))           // a mark within a term, however late
	mustOK(t, s, aliveCmd(t0+hour+20*second, true))  // a failover
	mustOK(t, s, aliveCmd(t0+hour+25*second, false)) // the new leader's mark
	if l, err := s.ServiceLife(); err != nil || len(l.GetOutages()) != 0 || l.GetAliveUnixMs() != t0+hour+25*second {
		t.Fatalf("life %v %v", l, err)
	}
	mustOK(t, s, aliveCmd(t0+2*hour, true))
	l, err := s.ServiceLife()
	if err != nil || len(l.GetOutages()) != 1 || l.GetOutages()[0].GetFromUnixMs() != t0+hour+25*second || l.GetOutages()[0].GetToUnixMs() != t0+2*hour {
		t.Fatalf("life %v %v", l, err)
	}
	for i := range MaxOutages + 2 {
		mustOK(t, s, aliveCmd(t0+int64(3+i)*hour, true))
	}
	if l, _ := s.ServiceLife(); len(l.GetOutages()) != MaxOutages {
		t.Fatalf("%d outages kept", len(l.GetOutages()))
	}
	bad := aliveCmd(t0, true)
	bad.GetMarkAlive().OutageAfterMs = MinOutageAfter - 1
	if res := apply(t, s, bad)[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
		t.Fatalf("a short bound: %v", res)
	}
}

// TestDeadlineInAnOutageRestartsFromItsEnd: a ping monitor whose missed
// deadline fell while the whole service was down is not alerted for it:
// its next run is expected from the outage's end, and missed then, once.
// A deadline after the outage fires as usual.
func TestDeadlineInAnOutageRestartsFromItsEnd(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	pingMonitor(t, s, pingID, "backup", 60, 10, 60)
	mustOK(t, s, aliveCmd(t0, true))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "backup", "complete", t0)))
	mustOK(t, s, aliveCmd(t0+5*second, false))
	// Everything stopped from t0+5s; the next leader starts at t0+5m.
	end := t0 + 5*60*second
	mustOK(t, s, aliveCmd(end, true))
	m := monitorByID(t, s, pingID)
	_, late, missed := pingstate.Deadlines(PingSettings(m), PingState(m))
	for _, kind := range []string{pingstate.DeadlineLate, pingstate.DeadlineMissed} {
		due := map[string]int64{pingstate.DeadlineLate: late, pingstate.DeadlineMissed: missed}[kind]
		res := apply(t, s, fireCmd("a", pingID, kind, due, end+100))[0]
		if kind == pingstate.DeadlineLate && (res.GetStale() || due != t0+60*second) {
			t.Fatalf("late at +%d: %v", (due-t0)/second, res)
		}
		if kind == pingstate.DeadlineMissed && !res.GetStale() {
			t.Fatalf("the missed deadline of the old base was still there: %v", res)
		}
	}
	requireAlerts(t, s)
	m = monitorByID(t, s, pingID)
	if PingState(m).State != pingstate.Up || len(mustEvents(t, s, "a", pingID, 10)) != 1 {
		t.Fatalf("after the outage: %+v, %d events", PingState(m), len(mustEvents(t, s, "a", pingID, 10)))
	}
	_, late, missed = pingstate.Deadlines(PingSettings(m), PingState(m))
	if late != end+60*second || missed != end+70*second {
		t.Fatalf("deadlines at +%d and +%d s after the end, want +60 and +70", (late-end)/second, (missed-end)/second)
	}
	mustOK(t, s, fireCmd("a", pingID, pingstate.DeadlineLate, late, late), fireCmd("a", pingID, pingstate.DeadlineMissed, missed, missed))
	requireAlerts(t, s, pingstate.AlertMissed)
}

func markAliveWorstCase() worstCase {
	return worstCase{
		setup: func(t *testing.T, s *Store) {
			for i := range MaxOutages {
				mustOK(t, s, aliveCmd(t0+int64(i)*hour, true))
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command { return aliveCmd(t0+100*hour, true) },
		want:  raftv1.Status_STATUS_OK,
		over:  cmd(&raftv1.Command{RequestId: long(MaxKeyPartBytes + 1), Op: &raftv1.Command_MarkAlive{MarkAlive: &raftv1.MarkAlive{}}}),
	}
}
