package state

import (
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// Uptime is time up / (time up + time down) over a window. What a
// monitor's time counts as follows the state people see (UptimeStateOf):
//
//   - up: a ping monitor up, running or late (overdue within its grace
//     time: not alerted yet), a check whose newest verdict is success;
//   - down: a ping monitor down (a run missed or timed out) or failed (its
//     last run failed), from the moment it went so until it recovers; a
//     check whose newest verdict is failed, from that execution until the
//     next success;
//   - not counted: new (no ping or verdict yet), paused (disabled), and
//     unknown (its agent region is offline, while it is).
//
// The state machine records each change of that state (a flip) at the
// time the state changed (the event's time, the deadline that passed, the
// execution's finish, the command's time for a pause), never before the
// previous flip nor after the command's time. Per monitor it keeps the
// flips of the last 31 days (exact figures for every window up to 30
// days) and the up and down time of each UTC day of the last 90 (the
// status page's bars): one record, uptime:<monitor>, rewritten only at a
// flip. The interval since the last flip is added at read time.
const (
	dayMs = 24 * 60 * 60 * 1000
	// UptimeDays is how many whole UTC days before today a monitor's
	// daily uptime keeps (today is kept too).
	UptimeDays = 90
	// uptimeFlipHorizon is how far back flips are kept: the longest window
	// shown (30 days) and a day to spare.
	uptimeFlipHorizon = 31 * dayMs
	// maxUptimeFlips bounds the flips kept. A monitor that changed state
	// more often in 31 days has its older windows' part before the oldest
	// flip kept estimated from its days (UptimeOver).
	maxUptimeFlips = 128
)

// UptimeStateOf is what m's time counts as while its state is as stored
// (nothing while it is disabled or paused):
// verdict is a check's newest verdict (CheckStatus.verdict), unused for a
// ping monitor. Being unknown (an offline agent region) is not stored in
// the monitor; readers pass it to UptimeOver and UptimeDaily.
func UptimeStateOf(m *statev1.Monitor, verdict string) statev1.UptimeState {
	if !m.GetEnabled() || m.GetQuiet().GetPaused() {
		return statev1.UptimeState_UPTIME_STATE_UNSPECIFIED
	}
	if m.GetKind() != KindPing {
		switch verdict {
		case ExecSuccess:
			return statev1.UptimeState_UPTIME_STATE_UP
		case ExecFailed:
			return statev1.UptimeState_UPTIME_STATE_DOWN
		}
		return statev1.UptimeState_UPTIME_STATE_UNSPECIFIED
	}
	switch PingState(m).State {
	case pingstate.Up, pingstate.Running, pingstate.Late:
		return statev1.UptimeState_UPTIME_STATE_UP
	case pingstate.Down, pingstate.Failed:
		return statev1.UptimeState_UPTIME_STATE_DOWN
	}
	return statev1.UptimeState_UPTIME_STATE_UNSPECIFIED
}

// recordFlip records in u that the monitor's time counts as st from atMs
// on, applied at nowMs; it reports whether u changed. atMs is moved into
// [the previous flip, nowMs]. The interval the flip closes goes into the
// days; flips and days older than they are kept for are dropped.
func recordFlip(u *statev1.Uptime, st statev1.UptimeState, atMs, nowMs int64) bool {
	atMs = min(atMs, nowMs)
	n := len(u.Flips)
	if n == 0 {
		if st == statev1.UptimeState_UPTIME_STATE_UNSPECIFIED {
			return false // nothing counted yet, nothing to record
		}
		u.TrackedFromUnixMs = atMs
		u.Flips = append(u.Flips, &statev1.UptimeFlip{AtUnixMs: atMs, State: st})
		return true
	}
	last := u.Flips[n-1]
	if last.GetState() == st {
		return false
	}
	atMs = max(atMs, last.GetAtUnixMs())
	addUptime(u, last.GetState(), last.GetAtUnixMs(), atMs, nowMs)
	switch {
	case atMs > last.GetAtUnixMs():
		u.Flips = append(u.Flips, &statev1.UptimeFlip{AtUnixMs: atMs, State: st})
	case n > 1 && u.Flips[n-2].GetState() == st:
		// The last state lasted no time: it never was.
		u.Flips = u.Flips[:n-1]
	default:
		last.State = st
	}
	trimUptime(u, nowMs)
	return true
}

// addUptime adds [fromMs, toMs) of state st to u's days (those kept as of
// nowMs). Intervals come in time order, so a day is the last one or new.
func addUptime(u *statev1.Uptime, st statev1.UptimeState, fromMs, toMs, nowMs int64) {
	if st == statev1.UptimeState_UPTIME_STATE_UNSPECIFIED {
		return
	}
	fromMs = max(fromMs, firstKeptDay(nowMs)*dayMs)
	for fromMs < toMs {
		day := fromMs / dayMs
		end := min(toMs, (day+1)*dayMs)
		var d *statev1.UptimeDay
		if n := len(u.Days); n > 0 && u.Days[n-1].GetDay() == day {
			d = u.Days[n-1]
		} else {
			d = &statev1.UptimeDay{Day: day}
			u.Days = append(u.Days, d)
		}
		if st == statev1.UptimeState_UPTIME_STATE_UP {
			d.UpMs += end - fromMs
		} else {
			d.DownMs += end - fromMs
		}
		fromMs = end
	}
}

// firstKeptDay is the oldest UTC day kept as of nowMs.
func firstKeptDay(nowMs int64) int64 { return nowMs/dayMs - UptimeDays }

// trimUptime drops the days and flips u no longer keeps as of nowMs: days
// before firstKeptDay; flips while the next one is also past the horizon
// (the state at the horizon stays known) or while there are too many.
func trimUptime(u *statev1.Uptime, nowMs int64) {
	first := firstKeptDay(nowMs)
	i := 0
	for i < len(u.Days) && u.Days[i].GetDay() < first {
		i++
	}
	u.Days = u.Days[i:]
	horizon := nowMs - uptimeFlipHorizon
	j := 0
	for len(u.Flips)-j > 1 && (len(u.Flips)-j > maxUptimeFlips || u.Flips[j+1].GetAtUnixMs() <= horizon) {
		j++
	}
	u.Flips = u.Flips[j:]
}

// UptimeRatio is the up and down time of a window.
type UptimeRatio struct {
	UpMs, DownMs int64
}

// Known tells whether any of the window counted.
func (r UptimeRatio) Known() bool { return r.UpMs+r.DownMs > 0 }

// Percent is the share of the counted time that was up (0 to 100); 0
// when nothing counted (see Known).
func (r UptimeRatio) Percent() float64 {
	if !r.Known() {
		return 0
	}
	return float64(r.UpMs) * 100 / float64(r.UpMs+r.DownMs)
}

// add counts [fromMs, toMs) ∩ [a, b) as st.
func (r *UptimeRatio) add(st statev1.UptimeState, fromMs, toMs, a, b int64) {
	d := min(toMs, b) - max(fromMs, a)
	if d <= 0 {
		return
	}
	switch st {
	case statev1.UptimeState_UPTIME_STATE_UP:
		r.UpMs += d
	case statev1.UptimeState_UPTIME_STATE_DOWN:
		r.DownMs += d
	}
}

// UptimeOver is the uptime of u (nil: none) over [fromMs, toMs) as of
// nowMs (toMs at most nowMs): the intervals between its flips and the
// state since the last one, which counts until nowMs, or until
// unknownFromMs when that is set (the monitor is unknown since then: not
// counted). The part of the window before the oldest flip kept, when
// older flips were dropped, is estimated from the days: each day's up and
// down time in proportion to how much of the day is in that part.
func UptimeOver(u *statev1.Uptime, fromMs, toMs, nowMs, unknownFromMs int64) UptimeRatio {
	var r UptimeRatio
	flips := u.GetFlips()
	if len(flips) == 0 {
		return r
	}
	toMs = min(toMs, nowMs)
	for i, f := range flips {
		end := nowMs
		if i+1 < len(flips) {
			end = flips[i+1].GetAtUnixMs()
		} else if unknownFromMs > 0 {
			end = min(end, unknownFromMs)
		}
		r.add(f.GetState(), f.GetAtUnixMs(), end, fromMs, toMs)
	}
	exactFrom := flips[0].GetAtUnixMs()
	if a, b := max(fromMs, u.GetTrackedFromUnixMs()), min(toMs, exactFrom); a < b {
		for _, d := range u.GetDays() {
			start := d.GetDay() * dayMs
			overlap := min(b, start+dayMs) - max(a, start)
			if overlap <= 0 {
				continue
			}
			r.UpMs += d.GetUpMs() * overlap / dayMs
			r.DownMs += d.GetDownMs() * overlap / dayMs
		}
	}
	return r
}

// UptimeDaily is the uptime of each of the n UTC days up to and including
// nowMs's, oldest first: the days of u (nil: none) and the state since its
// last flip, counted until nowMs or unknownFromMs (as for UptimeOver).
func UptimeDaily(u *statev1.Uptime, nowMs int64, n int, unknownFromMs int64) []UptimeRatio {
	out := make([]UptimeRatio, n)
	first := nowMs/dayMs - int64(n) + 1
	for _, d := range u.GetDays() {
		if i := d.GetDay() - first; i >= 0 && i < int64(n) {
			out[i].UpMs += d.GetUpMs()
			out[i].DownMs += d.GetDownMs()
		}
	}
	flips := u.GetFlips()
	if len(flips) == 0 {
		return out
	}
	last := flips[len(flips)-1]
	end := nowMs
	if unknownFromMs > 0 {
		end = min(end, unknownFromMs)
	}
	for i := range out {
		start := (first + int64(i)) * dayMs
		out[i].add(last.GetState(), last.GetAtUnixMs(), end, start, start+dayMs)
	}
	return out
}
