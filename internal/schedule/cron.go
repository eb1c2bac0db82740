package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	cron "github.com/netresearch/go-cron"
)

// maxSpec bounds a schedule string; a real cron expression is far shorter.
const maxSpec = 256

// searchYears is how far Next and Prev look for a cron time: more than the
// eight years between two Februaries 29 around 2100.
const searchYears = 9

// cronParser reads five fields and the descriptors; DowOrDom is crontab's
// rule for day of month and day of week (a day matching either counts when
// both are restricted).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor | cron.DowOrDom).
	WithMaxSearchYears(searchYears)

// descriptors are the @ forms accepted (crontab's, less @reboot, which is
// no time, and the library's @every, which the interval shorthand covers).
var descriptors = []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}

// cronSpec is a parsed cron expression over wall-clock time: the library's
// schedule evaluated in UTC, which has no daylight saving, so its times are
// the local times of the expression; dst.go maps them to instants in a zone.
type cronSpec struct {
	wall *cron.SpecSchedule
}

// parseCron parses a 5-field cron expression or a descriptor. Only digits,
// letters (month and weekday names) and the operators * , - / are allowed,
// which keeps out the library's extensions (TZ= prefixes, the Quartz "?",
// L, W, # and H).
func parseCron(spec string) (*cronSpec, error) {
	if len(spec) > maxSpec {
		return nil, fmt.Errorf("%w: longer than %d characters", ErrInvalid, maxSpec)
	}
	if strings.HasPrefix(spec, "@") {
		if !slices.Contains(descriptors, spec) {
			return nil, fmt.Errorf("%w: %q: the descriptors are %s", ErrInvalid, spec, strings.Join(descriptors, ", "))
		}
		return wallSchedule(spec, nil)
	}
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
	return wallSchedule(strings.Join(fields, " "), fields)
}

// starBit is the library's mark of a day field written as a wildcard
// (SpecSchedule's Dom and Dow): with it set on either field, a day must
// match both, as for "*".
const starBit = 1 << 63

// wallSchedule parses spec (fields: its five fields, nil for a descriptor)
// with the library, recovering from a panic (the library is not ours: a bad
// string must be an error, never a crash).
//
// Crontab treats a day field that starts with "*" as unrestricted ("*/2"
// too), so only two fields that both start otherwise make a day match
// either; the library marks only a plain "*" (or "*/1"), so the mark is set
// here for the others.
func wallSchedule(spec string, fields []string) (c *cronSpec, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("%w: %q cannot be parsed", ErrInvalid, spec)
		}
	}()
	s, err := cronParser.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	ss, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a cron expression", ErrInvalid, spec)
	}
	ss.Location = time.UTC
	if len(fields) == 5 && strings.HasPrefix(fields[2], "*") {
		ss.Dom |= starBit
	}
	if len(fields) == 5 && strings.HasPrefix(fields[4], "*") {
		ss.Dow |= starBit
	}
	return &cronSpec{wall: ss}, nil
}
