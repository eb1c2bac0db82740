package pingstate

import (
	"fmt"
	"strings"
	"testing"
)

const (
	min  = int64(60_000)
	hour = 60 * min
	// t0 is when every sequence starts (0 means "none" in State).
	t0 = int64(1_700_000_000_000)
)

// step is a ping ("run", "complete@3m" for a duration, "fail", "skip") at
// a time, or a deadline ("deadline:timeout", "deadline:missed") that the
// engine proposes at its due time.
type step struct {
	at    int64
	do    string
	state string
	alert string
}

func ping(do string, at int64) Ping {
	status, dur, _ := strings.Cut(do, "@")
	p := Ping{Status: status, AtMs: at, DurationMs: -1}
	if dur != "" {
		var m int64
		fmt.Sscanf(dur, "%dm", &m)
		p.DurationMs = m * min
	}
	return p
}

func run(t *testing.T, s Settings, steps []step, muted Muted) {
	t.Helper()
	st := State{State: New}
	for i, sp := range steps {
		sp.at += t0
		var alert string
		if kind, ok := strings.CutPrefix(sp.do, "deadline:"); ok {
			timeout, late, missed := Deadlines(s, st)
			due := map[string]int64{DeadlineTimeout: timeout, DeadlineLate: late, DeadlineMissed: missed}[kind]
			if due == 0 {
				t.Fatalf("step %d: no %s deadline pending (state %+v)", i, kind, st)
			}
			if due != sp.at {
				t.Fatalf("step %d: %s deadline due at +%d, want +%d", i, kind, due-t0, sp.at-t0)
			}
			st, alert = OnDeadline(s, st, kind, due, sp.at, muted)
			// Proposed again (a new leader, a retry): nothing happens.
			if again, a2 := OnDeadline(s, st, kind, due, sp.at+1000, muted); a2 != "" || again != st {
				t.Fatalf("step %d: a deadline fired twice: %q %+v", i, a2, again)
			}
		} else {
			st, alert = OnPing(s, st, ping(sp.do, sp.at), muted)
		}
		if st.State != sp.state || alert != sp.alert {
			t.Fatalf("step %d (%s at %d): state %q alert %q, want %q %q", i, sp.do, sp.at, st.State, alert, sp.state, sp.alert)
		}
	}
}

func TestSequences(t *testing.T) {
	hourly := Settings{Enabled: true, TimeoutMs: 10 * min, IntervalMs: hour, GraceMs: 5 * min}
	for _, tc := range []struct {
		name  string
		s     Settings
		steps []step
	}{
		{"good runs never alert", hourly, []step{
			{0, "run", Running, ""}, {2 * min, "complete@2m", Up, ""},
			{hour, "run", Running, ""}, {hour + min, "complete@1m", Up, ""},
		}},
		{"fail alerts once, recovery alerts once", hourly, []step{
			{0, "run", Running, ""}, {min, "fail", Failed, AlertFailed},
			{2 * min, "fail", Failed, ""}, {3 * min, "run", Failed, ""},
			{4 * min, "complete@1m", Up, AlertRecovered}, {5 * min, "complete@1m", Up, ""},
		}},
		{"timeout, then the late complete recovers", hourly, []step{
			{0, "run", Running, ""}, {10 * min, "deadline:timeout", Down, AlertTimeout},
			{12 * min, "complete@12m", Up, AlertRecovered},
		}},
		{"slow run alerts once, a good run recovers", hourly, []step{
			{0, "complete@11m", Up, AlertSlow}, {hour, "complete@12m", Up, ""},
			{2 * hour, "complete@1m", Up, AlertRecovered},
		}},
		{"missed, then a ping recovers only with a good complete", hourly, []step{
			{0, "complete@1m", Up, ""}, {hour, "deadline:late", Late, ""}, {hour + 5*min, "deadline:missed", Down, AlertMissed},
			{hour + 6*min, "run", Down, ""}, {hour + 7*min, "complete@1m", Up, AlertRecovered},
		}},
		{"skip resets the missed deadline and never alerts", hourly, []step{
			{0, "complete@1m", Up, ""}, {hour, "skip", Up, ""},
			{2*hour + 5*min, "deadline:missed", Down, AlertMissed}, {3 * hour, "skip", Down, ""},
		}},
		{"a fail after a timeout is one more state change", hourly, []step{
			{0, "run", Running, ""}, {10 * min, "deadline:timeout", Down, AlertTimeout},
			{11 * min, "fail", Failed, AlertFailed}, {hour, "complete@1m", Up, AlertRecovered},
		}},
		{"late within the grace time, then back up with a ping", hourly, []step{
			{0, "complete@1m", Up, ""}, {hour, "deadline:late", Late, ""}, {hour + min, "complete@1m", Up, ""},
		}},
		{"no grace: no late step, straight to down", Settings{Enabled: true, TimeoutMs: hour, IntervalMs: hour}, []step{
			{0, "complete@1m", Up, ""}, {hour, "deadline:missed", Down, AlertMissed},
		}},
		{"no interval, no missed deadline", Settings{Enabled: true, TimeoutMs: hour}, []step{
			{0, "complete@1m", Up, ""}, {100 * hour, "complete@1m", Up, ""},
		}},
		{"paused monitors never alert", Settings{TimeoutMs: min, IntervalMs: hour}, []step{
			{0, "fail", Paused, ""}, {min, "complete@5m", Paused, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc.s, tc.steps, false) })
	}
}

func TestMutedChangesStateButRaisesNothing(t *testing.T) {
	run(t, Settings{Enabled: true, TimeoutMs: 10 * min, IntervalMs: hour}, []step{
		{0, "run", Running, ""}, {min, "fail", Failed, ""}, {2 * min, "complete@1m", Up, ""},
		{hour + 2*min, "deadline:missed", Down, ""},
	}, true)
}

func TestStaleDeadlinesDoNothing(t *testing.T) {
	s := Settings{Enabled: true, TimeoutMs: 10 * min, IntervalMs: hour}
	st, _ := OnPing(s, State{State: New}, Ping{Status: "complete", AtMs: t0, DurationMs: min}, false)
	_, _, due := Deadlines(s, st)
	// A newer ping moved the deadline: the old one is stale.
	st, _ = OnPing(s, st, Ping{Status: "complete", AtMs: t0 + 30*min, DurationMs: min}, false)
	if after, alert := OnDeadline(s, st, DeadlineMissed, due, due, false); alert != "" || after != st {
		t.Fatalf("a stale deadline fired: %q %+v", alert, after)
	}
	// Not due yet: nothing.
	_, _, due = Deadlines(s, st)
	if _, alert := OnDeadline(s, st, DeadlineMissed, due, due-1, false); alert != "" {
		t.Fatal("a deadline fired early")
	}
}

func TestEarliest(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want int64
	}{
		{nil, 0}, {[]int64{0, 0}, 0}, {[]int64{5, 0}, 5}, {[]int64{0, 5}, 5},
		{[]int64{7, 3, 0}, 3}, {[]int64{0, 9, 4}, 4}, {[]int64{2, 2}, 2},
	} {
		if got := Earliest(tc.in...); got != tc.want {
			t.Errorf("Earliest(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// Disabled: paused at once with no deadline. Enabled again: judged afresh,
// its deadlines counted from the moment it was enabled, no alert pending.
func TestSetEnabled(t *testing.T) {
	s := Settings{Enabled: true, TimeoutMs: 10 * min, IntervalMs: hour, GraceMs: 5 * min}
	st, _ := OnPing(s, State{State: New}, Ping{Status: "fail", AtMs: t0, DurationMs: -1}, false)
	st = SetEnabled(st, false, t0+min)
	s.Enabled = false
	if timeout, late, missed := Deadlines(s, st); st.State != Paused || timeout+late+missed != 0 {
		t.Fatalf("disabled: %+v, deadlines %d %d %d", st, timeout, late, missed)
	}
	back := t0 + 3*hour
	st = SetEnabled(st, true, back)
	s.Enabled = true
	if st.State != Up || st.Alerting || st.BaseMs != back {
		t.Fatalf("enabled again: %+v", st)
	}
	if _, late, missed := Deadlines(s, st); late != back+hour || missed != back+hour+5*min {
		t.Fatalf("deadlines late %d missed %d, want from %d", late, missed, back)
	}
	// A deadline of the last ping before the pause is stale.
	if got, alert := OnDeadline(s, st, DeadlineMissed, t0+hour+5*min, back, false); got != st || alert != "" {
		t.Fatalf("old deadline: %+v %q", got, alert)
	}
	// A run open across the pause times out a timeout after the resume;
	// a monitor that never had a ping is new again.
	open := SetEnabled(State{State: Paused, LastPingMs: t0, RunStartMs: t0}, true, back)
	if timeout, _, _ := Deadlines(s, open); open.State != Running || timeout != back+10*min {
		t.Fatalf("open run: %+v, timeout %d", open, timeout)
	}
	if fresh := SetEnabled(State{State: Paused}, true, back); fresh.State != New {
		t.Fatalf("never pinged: %+v", fresh)
	}
	// Enabling a monitor that is not paused changes nothing.
	if up := (State{State: Up, LastPingMs: t0}); SetEnabled(up, true, back) != up {
		t.Fatal("enabling an enabled monitor changed it")
	}
}
