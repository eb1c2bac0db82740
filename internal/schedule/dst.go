package schedule

import "time"

// The time-zone rules of cron schedules. A cron expression names wall-clock
// times; the library finds them on a clock without daylight saving (UTC),
// and this file maps each to an instant in the schedule's zone:
//
//   - a wall time that occurs once is that instant;
//   - a wall time skipped by a jump forward (02:30 on the night clocks go
//     from 02:00 to 03:00) is expected at the first instant after the jump
//     (03:00 new time), so a daily 02:30 job still runs that day, once;
//   - a wall time that occurs twice (clocks go back from 03:00 to 02:00) is
//     expected once, at its first occurrence.
//
// So the times a schedule gives are strictly increasing instants, and every
// node computes the same ones from the same embedded zone database.

// zoneWindow spans every UTC offset a zone can have (-12h to +14h, more in
// local mean time before 1900): the instants a wall time can stand for lie
// within it on either side.
const zoneWindow = 16 * time.Hour

// maxSkips bounds the wall times next and prev pass over because they map
// to an instant on the wrong side (the repeated hour of a jump back holds
// 60 minute times): far above any real zone, so a bad zone cannot spin.
const maxSkips = 10000

// next is the first time of c after after, in UTC.
func (c *cronSpec) next(after time.Time, loc *time.Location) time.Time {
	if loc == time.UTC {
		return c.wallNext(after.UTC())
	}
	// Every wall time up to after's maps to an instant at or before after
	// (one of a repeated hour to its first occurrence, one skipped to the
	// jump): start the search there. Only when after is in the second pass
	// of a repeated hour do later wall times still map before it (skipped).
	_, off := after.In(loc).Zone()
	w := naive(after, off)
	for range maxSkips {
		w = c.wallNext(w)
		if w.IsZero() {
			return time.Time{}
		}
		if at := instant(w, loc); at.After(after) {
			return at
		}
	}
	return time.Time{}
}

// prev is the last time of c before before, in UTC.
func (c *cronSpec) prev(before time.Time, loc *time.Location) time.Time {
	if loc == time.UTC {
		return c.wallPrev(before.UTC())
	}
	_, hi := offsetRange(before, loc)
	// Every wall time from before's with the largest offset around on maps
	// to an instant at or after before.
	w := naive(before, hi)
	for range maxSkips {
		w = c.wallPrev(w)
		if w.IsZero() {
			return time.Time{}
		}
		if at := instant(w, loc); at.Before(before) {
			return at
		}
	}
	return time.Time{}
}

// wallNext is the library's first cron time strictly after w. Cron times
// are whole minutes, and the library steps second by second to the next
// whole minute, so it is asked from the last second of w's minute.
func (c *cronSpec) wallNext(w time.Time) time.Time {
	return c.wall.Next(w.Truncate(time.Minute).Add(59 * time.Second))
}

// wallPrev is the library's last cron time strictly before w, asked so
// that the library starts on a whole minute (it looks from the second
// before the time it is given).
func (c *cronSpec) wallPrev(w time.Time) time.Time {
	m := w.Truncate(time.Minute)
	if m.Equal(w) {
		return c.wall.Prev(m.Add(-59 * time.Second))
	}
	return c.wall.Prev(m.Add(time.Second))
}

// naive is the wall time of t at UTC offset off, as a UTC time (the
// library's clock).
func naive(t time.Time, off int) time.Time {
	return t.UTC().Add(time.Duration(off) * time.Second)
}

// offsetRange returns the smallest and largest UTC offsets (seconds) loc has
// within zoneWindow of t.
func offsetRange(t time.Time, loc *time.Location) (lo, hi int) {
	first := true
	zonePeriods(t.Add(-zoneWindow), t.Add(zoneWindow), loc, func(_, _ time.Time, off int) bool {
		if first || off < lo {
			lo = off
		}
		if first || off > hi {
			hi = off
		}
		first = false
		return true
	})
	return lo, hi
}

// instant maps the wall time w (a UTC time read as a local one) to its
// instant in loc by the rules above.
func instant(w time.Time, loc *time.Location) time.Time {
	u := w.Unix()
	var found, after time.Time
	zonePeriods(w.Add(-zoneWindow), w.Add(zoneWindow), loc, func(start, end time.Time, off int) bool {
		at := time.Unix(u-int64(off), 0).UTC()
		if (start.IsZero() || !at.Before(start)) && (end.IsZero() || at.Before(end)) {
			found = at // periods come in time order: the first reading is the earliest
			return false
		}
		// The first period that begins after w on the wall: w was skipped
		// by the jump at its start.
		if after.IsZero() && !start.IsZero() && start.Unix()+int64(off) > u {
			after = start.UTC()
		}
		return true
	})
	if !found.IsZero() {
		return found
	}
	if !after.IsZero() {
		return after
	}
	return time.Unix(u, 0).UTC() // no period around: cannot happen in a real zone
}

// zonePeriods calls fn with each period of constant UTC offset of loc that
// overlaps [from, to), in time order, until fn returns false. A zero start
// or end is unbounded.
func zonePeriods(from, to time.Time, loc *time.Location, fn func(start, end time.Time, off int) bool) {
	t := from
	for range maxSkips {
		lt := t.In(loc)
		_, off := lt.Zone()
		start, end := lt.ZoneBounds()
		if !fn(start, end, off) || end.IsZero() || !end.Before(to) {
			return
		}
		t = end
	}
}
