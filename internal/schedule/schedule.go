// Package schedule parses schedules and computes their times: the schedule
// of an HTTP or SSL check, and of a ping monitor (the runs of a cron job).
//
// A schedule is either an interval shorthand (<n>s, <n>m, <n>h or <n>d, from
// 30s to 365d) or a cron expression in an IANA time zone (UTC unless
// named): five fields (minute, hour, day of month, month, day of week) with
// numbers, month and weekday names, ranges, steps and lists, or one of
// @hourly, @daily (@midnight), @weekly, @monthly, @yearly (@annually). As in
// crontab, when both day of month and day of week are restricted a day that
// matches either counts. Cron parsing is done by github.com/netresearch/go-cron
// (with its DowOrDom option for that rule); this package narrows what it
// accepts and owns the time-zone rules (dst.go).
//
// Interval schedules are aligned to the Unix epoch: a "5m" check runs at every
// multiple of five minutes since 1970-01-01T00:00:00Z, so every node of a
// cluster computes the same slots without coordination. A "7d" schedule
// therefore runs on Thursdays at 00:00 UTC (the epoch was a Thursday), and
// "1d" at midnight UTC. A ping monitor's interval counts from its last ping
// instead (ExpectedAfter).
package schedule

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the interval shorthand.
const (
	MinInterval = 30 * time.Second
	MaxInterval = 365 * 24 * time.Hour
)

// ErrInvalid is wrapped by every error that Parse returns about the schedule
// itself (a zone that ParseIn refuses wraps ErrZoneInvalid instead).
var ErrInvalid = errors.New("invalid schedule")

// Schedule is a parsed schedule. The zero value never fires: Next returns the
// zero time. A Schedule is a small value, safe to copy and to use from
// several goroutines.
type Schedule struct {
	spec     string
	interval time.Duration // > 0 for the interval shorthand
	cron     *cronSpec     // set for cron expressions
	zone     *time.Location
}

// Parse parses an interval shorthand or a cron expression in UTC. Surrounding
// white space is ignored. The error, if any, wraps ErrInvalid and says what
// is wrong in English.
func Parse(s string) (Schedule, error) {
	return ParseIn(s, "")
}

// ParseIn parses a schedule whose cron times are wall-clock times in zone,
// an IANA name ("" is UTC; see LoadZone). An interval shorthand does not
// depend on the zone, but the zone must still be valid.
func ParseIn(s, zone string) (Schedule, error) {
	key := [2]string{s, zone}
	if sc, ok := parsed.Load(key); ok {
		return sc.(Schedule), nil
	}
	sc, err := parseIn(s, zone)
	if err == nil && parsedCount.Add(1) <= maxParsed {
		parsed.Store(key, sc)
	}
	return sc, err
}

// parsed remembers the schedules ParseIn parsed, by (spec, zone): the
// deadline engine asks for the schedule of every scheduled monitor at each
// rebuild and change, and a parse (with its check that the schedule fires)
// costs microseconds. Parsing is a pure function, so the memo changes no
// answer; it holds at most maxParsed entries (later ones are parsed each
// time).
var (
	parsed      sync.Map
	parsedCount atomic.Int64
)

// maxParsed bounds the memo: accounts share few distinct schedules.
const maxParsed = 10000

func parseIn(s, zone string) (Schedule, error) {
	loc, err := LoadZone(zone)
	if err != nil {
		return Schedule{}, err
	}
	spec := strings.TrimSpace(s)
	if spec == "" {
		return Schedule{}, fmt.Errorf("%w: empty", ErrInvalid)
	}
	if !strings.HasPrefix(spec, "@") && !strings.ContainsAny(spec, " \t") {
		d, err := parseInterval(spec)
		if err != nil {
			return Schedule{}, err
		}
		return Schedule{spec: spec, interval: d, zone: loc}, nil
	}
	c, err := parseCron(spec)
	if err != nil {
		return Schedule{}, err
	}
	sc := Schedule{spec: strings.Join(strings.Fields(spec), " "), cron: c, zone: loc}
	// An expression such as "0 0 30 2 *" parses but never fires.
	if sc.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return Schedule{}, fmt.Errorf("%w: %q never fires", ErrInvalid, sc.spec)
	}
	return sc, nil
}

// parseInterval parses <n>s|m|h|d with n a decimal number without sign or leading zero.
func parseInterval(spec string) (time.Duration, error) {
	num, unit := spec[:len(spec)-1], spec[len(spec)-1]
	var mult time.Duration
	switch unit {
	case 's':
		mult = time.Second
	case 'm':
		mult = time.Minute
	case 'h':
		mult = time.Hour
	case 'd':
		mult = 24 * time.Hour
	default:
		return 0, fmt.Errorf("%w: %q is neither an interval like 30s, 5m, 1h or 7d nor a 5-field cron expression", ErrInvalid, spec)
	}
	if num == "" || num[0] < '1' || num[0] > '9' || strings.Trim(num, "0123456789") != "" {
		return 0, fmt.Errorf("%w: %q: the interval must be a positive whole number followed by s, m, h or d", ErrInvalid, spec)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > int64(MaxInterval/mult) || time.Duration(n)*mult > MaxInterval {
		return 0, fmt.Errorf("%w: %q is longer than 365d", ErrInvalid, spec)
	}
	if d := time.Duration(n) * mult; d >= MinInterval {
		return d, nil
	}
	return 0, fmt.Errorf("%w: %q is shorter than 30s", ErrInvalid, spec)
}

// Next returns the first run time strictly after after, in UTC: the next
// epoch-aligned slot of an interval, the next cron time in the zone (with
// the daylight-saving rules of dst.go).
func (s Schedule) Next(after time.Time) time.Time {
	switch {
	case s.interval > 0:
		slot := floorDiv(after.Unix(), s.intervalSeconds())
		return time.Unix((slot+1)*s.intervalSeconds(), 0).UTC()
	case s.cron != nil:
		return s.cron.next(after, s.zone)
	default:
		return time.Time{}
	}
}

// Prev returns the last run time strictly before before, in UTC; the zero
// time when there is none within the library's search bound (years).
func (s Schedule) Prev(before time.Time) time.Time {
	switch {
	case s.interval > 0:
		iv := s.intervalSeconds()
		secs := before.Unix()
		slot := floorDiv(secs, iv)
		if slot*iv == secs && before.Nanosecond() == 0 {
			slot-- // before itself is a slot: strictly before
		}
		return time.Unix(slot*iv, 0).UTC()
	case s.cron != nil:
		return s.cron.prev(before, s.zone)
	default:
		return time.Time{}
	}
}

// NextN returns the next n run times after after (fewer if the schedule
// stops), for a preview.
func (s Schedule) NextN(after time.Time, n int) []time.Time {
	out := make([]time.Time, 0, max(n, 0))
	for range n {
		next := s.Next(after)
		if next.IsZero() {
			break
		}
		out = append(out, next)
		after = next
	}
	return out
}

// ExpectedAfter is when a ping monitor with this schedule expects its next
// run after a ping at last: the first cron time after last, or last plus the
// interval (a job run every 5m counts from its own runs, not from the clock's
// slots).
func (s Schedule) ExpectedAfter(last time.Time) time.Time {
	if s.interval > 0 {
		return last.Add(s.interval).UTC()
	}
	return s.Next(last)
}

// Interval returns the period of an interval schedule, and false for a cron expression.
func (s Schedule) Interval() (time.Duration, bool) {
	return s.interval, s.interval > 0
}

// String returns the schedule as given, trimmed, with the fields of a cron expression
// separated by single spaces.
func (s Schedule) String() string {
	return s.spec
}

// Zone returns the schedule's time zone (UTC when it named none).
func (s Schedule) Zone() *time.Location {
	if s.zone == nil {
		return time.UTC
	}
	return s.zone
}

// Offset is the stable offset of the check with this id within the period
// of an interval schedule: whole seconds from an FNV-1a hash of the id, so
// checks of the same interval spread over it instead of all running at :00.
// It is zero for a cron expression (cron slots are exact).
func (s Schedule) Offset(id string) time.Duration {
	if s.interval <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return time.Duration(h.Sum64()%uint64(s.interval/time.Second)) * time.Second
}

// NextFor returns the first run time strictly after after of the check
// with this id: the interval slots shifted by Offset(id), or the cron
// slots as Next gives them.
func (s Schedule) NextFor(id string, after time.Time) time.Time {
	off := s.Offset(id)
	next := s.Next(after.Add(-off))
	if next.IsZero() {
		return next
	}
	return next.Add(off)
}

func (s Schedule) intervalSeconds() int64 { return int64(s.interval / time.Second) }

// floorDiv is a/b rounded towards minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
