// Package schedule parses the schedule of an HTTP or SSL check and computes its run times.
//
// A schedule is either an interval shorthand (<n>s, <n>m, <n>h or <n>d, from 30s to 365d)
// or a standard 5-field cron expression (minute, hour, day of month, month, day of week)
// evaluated in UTC. Cron parsing is done by github.com/robfig/cron/v3 with its standard
// parser; this package narrows what it accepts to plain 5-field expressions.
//
// Interval schedules are aligned to the Unix epoch: a "5m" check runs at every multiple of
// five minutes since 1970-01-01T00:00:00Z, so every node of a cluster computes the same
// slots without coordination. A "7d" schedule therefore runs on Thursdays at 00:00 UTC
// (the epoch was a Thursday), and "1d" at midnight UTC.
package schedule

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Bounds of the interval shorthand.
const (
	MinInterval = 30 * time.Second
	MaxInterval = 365 * 24 * time.Hour
)

// ErrInvalid is wrapped by every error that Parse returns.
var ErrInvalid = errors.New("invalid schedule")

// Schedule is a parsed schedule. The zero value never fires: Next returns the zero time.
type Schedule struct {
	spec     string
	interval time.Duration // > 0 for the interval shorthand
	cron     cron.Schedule // set for cron expressions
}

// Parse parses an interval shorthand or a 5-field cron expression. Surrounding white space
// is ignored. The error, if any, wraps ErrInvalid and says what is wrong in English.
func Parse(s string) (Schedule, error) {
	spec := strings.TrimSpace(s)
	if spec == "" {
		return Schedule{}, fmt.Errorf("%w: empty", ErrInvalid)
	}
	if !strings.ContainsAny(spec, " \t") {
		d, err := parseInterval(spec)
		if err != nil {
			return Schedule{}, err
		}
		return Schedule{spec: spec, interval: d}, nil
	}
	c, err := parseCron(spec)
	if err != nil {
		return Schedule{}, err
	}
	return Schedule{spec: strings.Join(strings.Fields(spec), " "), cron: c}, nil
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

// cronParser accepts exactly five fields and no descriptors such as @hourly.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// parseCron parses a 5-field cron expression in UTC. Only digits, letters (month and
// weekday names) and the operators * , - / are allowed, which keeps out the library's
// extensions (@descriptors, TZ= prefixes, the Quartz "?").
func parseCron(spec string) (cron.Schedule, error) {
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return nil, fmt.Errorf("%w: a cron expression has 5 fields (minute hour day-of-month month day-of-week), got %d", ErrInvalid, len(fields))
	}
	for _, r := range spec {
		ok := r == ' ' || r == '\t' || r == '*' || r == ',' || r == '-' || r == '/' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return nil, fmt.Errorf("%w: unexpected character %q in cron expression", ErrInvalid, r)
		}
	}
	c, err := cronParser.Parse("CRON_TZ=UTC " + strings.Join(fields, " "))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	// An expression such as "0 0 30 2 *" parses but never fires.
	probe := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if c.Next(probe).IsZero() {
		return nil, fmt.Errorf("%w: %q never fires", ErrInvalid, spec)
	}
	return c, nil
}

// Next returns the first run time strictly after after, in UTC.
func (s Schedule) Next(after time.Time) time.Time {
	switch {
	case s.interval > 0:
		iv := int64(s.interval / time.Second)
		secs := after.Unix() // floor: the nanoseconds are always non-negative
		slot := secs / iv
		if secs%iv < 0 {
			slot--
		}
		return time.Unix((slot+1)*iv, 0).UTC()
	case s.cron != nil:
		return s.cron.Next(after.UTC()).UTC()
	default:
		return time.Time{}
	}
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
