package state

import (
	"math"
	"testing"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

const (
	upSt   = statev1.UptimeState_UPTIME_STATE_UP
	downSt = statev1.UptimeState_UPTIME_STATE_DOWN
	noneSt = statev1.UptimeState_UPTIME_STATE_UNSPECIFIED
)

// flipAt is one recorded change: the state from at on, recorded at now
// (0: at at).
type flipAt struct {
	st      statev1.UptimeState
	at, now int64
}

// history records flips as the state machine does.
func history(flips ...flipAt) *statev1.Uptime {
	u := new(statev1.Uptime)
	for _, f := range flips {
		now := f.now
		if now == 0 {
			now = f.at
		}
		recordFlip(u, f.st, f.at, now)
	}
	return u
}

// midnight is a UTC midnight: 2023-11-15T00:00:00Z.
const midnight = 1_700_006_400_000

func TestUptimeOver(t *testing.T) {
	now := midnight + 12*hour // noon
	cases := []struct {
		name     string
		u        *statev1.Uptime
		window   int64
		now      int64
		unknown  int64
		pct      float64 // -1: nothing counted
		up, down int64
	}{
		{name: "down 6 h of the last 24 h is 75%", window: day, now: now,
			u:   history(flipAt{st: upSt, at: now - 3*day}, flipAt{st: downSt, at: now - 10*hour}, flipAt{st: upSt, at: now - 4*hour}),
			pct: 75, up: 18 * hour, down: 6 * hour},
		{name: "down now, since 6 h", window: day, now: now,
			u:   history(flipAt{st: upSt, at: now - 3*day}, flipAt{st: downSt, at: now - 6*hour}),
			pct: 75, up: 18 * hour, down: 6 * hour},
		{name: "an outage across midnight counts in the window that holds it", window: day, now: midnight + 3*hour,
			u:   history(flipAt{st: upSt, at: midnight - 5*day}, flipAt{st: downSt, at: midnight - 2*hour}, flipAt{st: upSt, at: midnight + 1*hour}),
			pct: 87.5, up: 21 * hour, down: 3 * hour},
		{name: "an outage before the window does not count", window: day, now: now,
			u:   history(flipAt{st: upSt, at: now - 5*day}, flipAt{st: downSt, at: now - 2*day}, flipAt{st: upSt, at: now - 2*day + hour}),
			pct: 100, up: day},
		{name: "the same outage counts over 7 days", window: 7 * day, now: now,
			u:   history(flipAt{st: upSt, at: now - 10*day}, flipAt{st: downSt, at: now - 2*day}, flipAt{st: upSt, at: now - 2*day + 7*hour}),
			pct: 100 * float64(7*day-7*hour) / float64(7*day), up: 7*day - 7*hour, down: 7 * hour},
		{name: "paused and new time is not counted", window: day, now: now,
			u: history(flipAt{st: upSt, at: now - 20*hour}, flipAt{st: noneSt, at: now - 8*hour}, flipAt{st: downSt, at: now - 4*hour},
				flipAt{st: upSt, at: now - 2*hour}),
			pct: 100 * 14.0 / 16, up: 14 * hour, down: 2 * hour},
		{name: "a window before the monitor existed counts from its first state", window: 30 * day, now: now,
			u:   history(flipAt{st: upSt, at: now - 2*hour}, flipAt{st: downSt, at: now - 30*60*second}),
			pct: 75, up: 90 * 60 * second, down: 30 * 60 * second},
		{name: "never up or down", window: day, now: now, u: history(flipAt{st: noneSt, at: now - hour}), pct: -1},
		{name: "no record", window: day, now: now, u: nil, pct: -1},
		{name: "unknown since its agent region went offline", window: day, now: now, unknown: now - 6*hour,
			u:   history(flipAt{st: upSt, at: now - 3*day}, flipAt{st: downSt, at: now - 9*hour}),
			pct: 100 * 15.0 / 18, up: 15 * hour, down: 3 * hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := UptimeOver(c.u, c.now-c.window, c.now, c.now, c.unknown)
			if c.pct < 0 {
				if r.Known() {
					t.Fatalf("%+v counts something", r)
				}
				return
			}
			if r.UpMs != c.up || r.DownMs != c.down || math.Abs(r.Percent()-c.pct) > 1e-9 {
				t.Fatalf("%+v = %.4f%%, want up %d down %d = %.4f%%", r, r.Percent(), c.up, c.down, c.pct)
			}
		})
	}
}

func TestUptimeDaily(t *testing.T) {
	now := midnight + 6*hour
	// Down from 22:00 two days ago to 02:00 yesterday, down again since
	// 03:00 today; not counted before the first up, 4 days ago at noon.
	u := history(flipAt{st: upSt, at: midnight - 4*day + 12*hour}, flipAt{st: downSt, at: midnight - 2*day + 22*hour},
		flipAt{st: upSt, at: midnight - day + 2*hour}, flipAt{st: downSt, at: midnight + 3*hour})
	days := UptimeDaily(u, now, 6, 0)
	want := []UptimeRatio{
		{}, // 5 days ago
		{UpMs: 12 * hour},
		{UpMs: day},
		{UpMs: 22 * hour, DownMs: 2 * hour},
		{UpMs: 22 * hour, DownMs: 2 * hour},
		{UpMs: 3 * hour, DownMs: 3 * hour}, // today, until now
	}
	for i := range want {
		if days[i] != want[i] {
			t.Errorf("day %d: %+v, want %+v", i, days[i], want[i])
		}
	}
	// Unknown since 04:00: today counts until then.
	if got := UptimeDaily(u, now, 6, midnight+4*hour)[5]; got != (UptimeRatio{UpMs: 3 * hour, DownMs: hour}) {
		t.Errorf("today while unknown: %+v", got)
	}
}

func TestRecordFlipClampsAndMerges(t *testing.T) {
	u := history(flipAt{st: upSt, at: t0})
	// A flip stamped before the last one moves to it: the up state lasted
	// no time and is replaced.
	if !recordFlip(u, downSt, t0-hour, t0+hour) || len(u.Flips) != 1 || u.Flips[0].GetState() != downSt {
		t.Fatalf("flips %v", u.Flips)
	}
	// Back to up at the same moment: still one flip.
	recordFlip(u, upSt, t0+10*second, t0+10*second)
	recordFlip(u, downSt, t0+10*second, t0+10*second)
	recordFlip(u, upSt, t0+10*second, t0+10*second)
	if len(u.Flips) != 2 || u.Flips[1].GetState() != upSt || u.Flips[1].GetAtUnixMs() != t0+10*second {
		t.Fatalf("flips %v", u.Flips)
	}
	// A flip stamped after the command's time is moved to it.
	recordFlip(u, downSt, t0+day, t0+hour)
	if got := u.Flips[len(u.Flips)-1].GetAtUnixMs(); got != t0+hour {
		t.Fatalf("flip at %d, want %d", got, t0+hour)
	}
	// The same state again is no flip.
	if recordFlip(u, downSt, t0+2*hour, t0+2*hour) {
		t.Fatal("a repeat of the state was recorded")
	}
}

func TestUptimeKeepsBoundedHistory(t *testing.T) {
	start := midnight - 200*day
	u := history(flipAt{st: upSt, at: start}, flipAt{st: downSt, at: start + day})
	// 100 days later, at midnight, it recovers: only the last 90 days
	// are kept (today has nothing closed yet), and the flip at the start of
	// the outage, which is still the state at the horizon.
	now := start + 101*day
	recordFlip(u, upSt, now, now)
	if first := u.Days[0].GetDay(); first != now/dayMs-UptimeDays {
		t.Fatalf("oldest day kept %d, want %d", first, now/dayMs-UptimeDays)
	}
	if len(u.Days) != UptimeDays || len(u.Flips) != 2 {
		t.Fatalf("%d days and %d flips kept", len(u.Days), len(u.Flips))
	}
	// A monitor flapping every 10 minutes keeps its last maxUptimeFlips
	// flips; its 30-day figure is estimated from its days before them.
	u = history(flipAt{st: upSt, at: start})
	at := start
	for i := 0; i < 1000; i++ {
		at += 10 * 60 * second
		st := downSt
		if i%2 == 1 {
			st = upSt
		}
		recordFlip(u, st, at, at)
	}
	if len(u.Flips) != maxUptimeFlips {
		t.Fatalf("%d flips kept", len(u.Flips))
	}
	// Half of each 20 minutes was down, since the first flip, 10 minutes
	// after the start.
	r := UptimeOver(u, at-7*day, at, at, 0)
	if p := r.Percent(); math.Abs(p-50) > 1 {
		t.Fatalf("7-day uptime of a monitor down half the time: %.2f%% (%+v)", p, r)
	}
}
