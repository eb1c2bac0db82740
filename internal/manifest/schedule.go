package manifest

import (
	"strings"

	"lookout/internal/schedule"
)

// schedule decodes schedule and timezone (checks and ping monitors share one
// parser, internal/schedule, so a schedule means the same on both): an
// unknown zone is timezone_invalid, a schedule that does not parse or never
// fires in its zone is schedule_invalid. A check must have a schedule.
func (d *decoder) schedule(m *Manifest, required bool) {
	zone := ""
	if s, ok := d.str("timezone", CodeTimezoneInvalid); ok {
		if _, err := schedule.LoadZone(s); err != nil || s == "" {
			d.add("timezone", CodeTimezoneInvalid, "must be an IANA time zone name such as Europe/Berlin or UTC, got %q", excerptString(s))
		} else {
			zone = s
		}
		m.Timezone = s
	}
	s, ok := d.str("schedule", CodeScheduleInvalid)
	switch {
	case ok:
		if sc, err := schedule.ParseIn(s, zone); err != nil {
			d.add("schedule", CodeScheduleInvalid, "is invalid: %s", strings.TrimPrefix(err.Error(), schedule.ErrInvalid.Error()+": "))
		} else {
			m.Schedule = sc.String()
		}
	case required && !d.has("schedule"):
		d.missing("schedule", CodeScheduleInvalid, scheduleRequiredReason)
	}
}

// excerptString cuts a long string for a message.
func excerptString(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "..."
	}
	return s
}
