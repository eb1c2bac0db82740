package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

func mustUptime(t *testing.T, s *Store, id string) *statev1.Uptime {
	t.Helper()
	us, err := s.Uptimes([]string{id})
	if err != nil {
		t.Fatal(err)
	}
	return us[id]
}

// requireFlips checks a record's flips as (state, at) pairs.
func requireFlips(t *testing.T, u *statev1.Uptime, want ...flipAt) {
	t.Helper()
	if len(u.GetFlips()) != len(want) {
		t.Fatalf("flips %v, want %d", u.GetFlips(), len(want))
	}
	for i, w := range want {
		if f := u.GetFlips()[i]; f.GetState() != w.st || f.GetAtUnixMs() != w.at {
			t.Fatalf("flip %d: %v at %d, want %v at %d", i, f.GetState(), f.GetAtUnixMs(), w.st, w.at)
		}
	}
}

func TestPingsRecordUptimeFlips(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	// Up at its first complete; the run after it changes nothing; failed
	// an hour later; up again after three more hours: one batch may hold
	// several flips of one monitor.
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	m := mustMonitor(t, s, "a", "job")
	requireFlips(t, mustUptime(t, s, m.GetUuid()), flipAt{st: upSt, at: t0})
	ingestOK(t, s, ingestAt(t0+4*hour, 0, ping("a", "job", "run", t0+30*60*second), ping("a", "job", "fail", t0+hour), ping("a", "job", "complete", t0+4*hour)))
	u := mustUptime(t, s, m.GetUuid())
	requireFlips(t, u, flipAt{st: upSt, at: t0}, flipAt{st: downSt, at: t0 + hour}, flipAt{st: upSt, at: t0 + 4*hour})
	if r := UptimeOver(u, t0+4*hour-day, t0+4*hour, t0+4*hour, 0); r.UpMs != hour || r.DownMs != 3*hour {
		t.Fatalf("uptime %+v, want 1 h up, 3 h down", r)
	}
	// A monitor that only ran so far is up (running).
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "other", "run", t0)))
	requireFlips(t, mustUptime(t, s, mustMonitor(t, s, "a", "other").GetUuid()), flipAt{st: upSt, at: t0})
}

func TestMissedDeadlineIsDownFromTheDeadline(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	m := mustMonitor(t, s, "a", "job")
	interval, grace := int64(3600), int64(600)
	mustOK(t, s, cmd(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Updates: []*raftv1.MonitorSpec{{
		Uuid: m.GetUuid(), Kind: "ping", Name: "job", Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: &interval, GraceSeconds: &grace,
	}}}}}))
	// Late is still up; missed is down from the deadline, though the
	// leader fired it 5 s later.
	mustOK(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineLate, t0+hour, t0+hour+5*second))
	due := t0 + hour + 10*60*second
	mustOK(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineMissed, due, due+5*second))
	requireFlips(t, mustUptime(t, s, m.GetUuid()), flipAt{st: upSt, at: t0}, flipAt{st: downSt, at: due})
	// Recovered by the next complete.
	ingestOK(t, s, ingestAt(due+hour, 0, ping("a", "job", "complete", due+hour)))
	requireFlips(t, mustUptime(t, s, m.GetUuid()), flipAt{st: upSt, at: t0}, flipAt{st: downSt, at: due}, flipAt{st: upSt, at: due + hour})
}

func TestCheckVerdictsAndPausesRecordUptime(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	putCheck(t, s, KindHTTPCheck, true, true)
	// Pending (no verdict) is not counted: nothing recorded yet.
	if u := mustUptime(t, s, checkID); len(u.GetFlips()) != 0 {
		t.Fatalf("a new check has flips: %v", u.GetFlips())
	}
	// Each recorded as it finishes (the command a second later).
	record := func(e *raftv1.Execution) {
		c := recordCmd(0, e)
		c.TimeUnixMs = e.GetFinishedUnixMs() + second
		mustOK(t, s, c)
	}
	record(execution(t0, ExecSuccess))
	record(execution(t0+60*second, ExecRunning))
	record(execution(t0+60*second, ExecFailed))
	record(execution(t0+120*second, ExecFailed))
	// An interrupted execution is no verdict.
	interrupted := execution(t0+180*second, ExecFailed)
	interrupted.ErrorKind = ErrorInterrupted
	record(interrupted)
	record(execution(t0+240*second, ExecSuccess))
	// Paused at t0+1h (the command's time): not counted from then on;
	// resumed, it counts as its last verdict again.
	pause := func(enabled bool, at int64) {
		spec := &raftv1.MonitorSpec{Uuid: checkID, Kind: KindHTTPCheck, Name: "site", Enabled: enabled, Schedule: "1m",
			Config: &raftv1.CheckConfig{Url: "https://example.com", Method: "GET", Timeout: 10}}
		mustOK(t, s, cmd(&raftv1.Command{TimeUnixMs: at, Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: "a", Updates: []*raftv1.MonitorSpec{spec}}}}))
	}
	pause(false, t0+hour)
	pause(false, t0+hour+second) // no change
	pause(true, t0+2*hour)
	u := mustUptime(t, s, checkID)
	requireFlips(t, u,
		flipAt{st: upSt, at: t0 + 100},
		flipAt{st: downSt, at: t0 + 60*second + 100},
		flipAt{st: upSt, at: t0 + 240*second + 100},
		flipAt{st: noneSt, at: t0 + hour},
		flipAt{st: upSt, at: t0 + 2*hour})
	now := t0 + 3*hour
	if r := UptimeOver(u, now-day, now, now, 0); r.DownMs != 3*60*second || r.UpMs != 2*hour-3*60*second-100 {
		t.Fatalf("uptime %+v", r)
	}
	// Deleted with the monitor.
	mustOK(t, s, deleteMonitor("a", checkID))
	if keys := keysWithPrefix(t, s, prefixUptime); len(keys) != 0 {
		t.Fatalf("uptime records left: %v", keys)
	}
}

func TestUptimePrunedAfter90Days(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	ingestOK(t, s, ingestAt(t0+hour, 0, ping("a", "job", "fail", t0+hour)))
	m := mustMonitor(t, s, "a", "job")
	if d := mustUptime(t, s, m.GetUuid()).GetDays(); len(d) != 1 || d[0].GetDay() != t0/dayMs || d[0].GetUpMs() != hour {
		t.Fatalf("days %v", d)
	}
	// 120 days later: the day of the first hour is gone, the outage's
	// last 90 days are kept, and the daily series shows no more than them.
	later := t0 + 120*day
	ingestOK(t, s, ingestAt(later, 0, ping("a", "job", "complete", later)))
	u := mustUptime(t, s, m.GetUuid())
	if first := u.GetDays()[0].GetDay(); first != later/dayMs-UptimeDays {
		t.Fatalf("oldest day %d, want %d", first, later/dayMs-UptimeDays)
	}
	for _, d := range u.GetDays() {
		if d.GetUpMs() != 0 && d.GetDay() != later/dayMs {
			t.Fatalf("an up day outside the outage is kept: %v", d)
		}
	}
	if len(u.GetDays()) > UptimeDays+1 {
		t.Fatalf("%d days kept", len(u.GetDays()))
	}
}

// TestRuntimePauseIsNotCountedInUptime: a monitor paused through the
// pause command (not its manifest) counts nothing from the pause to the
// resume, as a disabled one.
func TestRuntimePauseIsNotCountedInUptime(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	id := mustMonitor(t, s, "a", "job").GetUuid()
	mustOK(t, s, pauseCmd("a", id, t0+hour, 0, "maintenance"))
	mustOK(t, s, resumeCmd("a", id, t0+2*hour))
	u := mustUptime(t, s, id)
	requireFlips(t, u,
		flipAt{st: upSt, at: t0},
		flipAt{st: noneSt, at: t0 + hour},
		flipAt{st: upSt, at: t0 + 2*hour})
	now := t0 + 3*hour
	if r := UptimeOver(u, now-day, now, now, 0); r.DownMs != 0 || r.UpMs != 2*hour {
		t.Fatalf("uptime %+v, want 2 h up and the paused hour not counted", r)
	}
}
