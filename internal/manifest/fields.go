package manifest

import (
	"strings"

	"lookout/internal/names"
)

// Bounds of the manifest fields (docs/api.md, "Manifest rules", and
// DESIGN.md).
const (
	MaxPingName        = 64
	MaxCheckName       = 255
	MaxTags            = 50
	MaxTagLen          = 64
	MaxGroupName       = 255
	MinTimeout         = 1
	MaxTimeout         = 604800
	MinInterval        = 60
	MaxIntervalSeconds = 31536000
	MinGrace           = 0
	MaxGrace           = 604800
	MaxDisplayName     = 255
	MaxProject         = 100
	MaxRegions         = 32
	MaxRegionLen       = 64
	// failure_threshold (checks) and remind_every_seconds (every kind),
	// decisions.md 12.
	MinFailureThreshold = 1
	MaxFailureThreshold = 10
	MinRemindEvery      = 300
	MaxRemindEvery      = 604800
)

// name decodes and checks the name for kind.
func (d *decoder) name(kind string) string {
	s, ok := d.str("name", CodeNameInvalid)
	if !ok {
		if !d.has("name") {
			d.missing("name", CodeNameInvalid, "a non-empty string")
		}
		return ""
	}
	switch kind {
	case KindPing:
		if n := runes(s); n < 1 || n > MaxPingName {
			d.add("name", CodeNameInvalid, "must be 1 to %d characters long, got %d", MaxPingName, n)
		}
		if !pingNameOK(s) {
			d.add("name", CodeNameCharsetInvalid, "may contain only the characters a-z A-Z 0-9 _ -, got %q", s)
		}
	default: // checks, and manifests whose kind is invalid
		if n := runes(s); n < 1 || n > MaxCheckName {
			d.add("name", CodeNameInvalid, "must be 1 to %d characters long, got %d", MaxCheckName, n)
		} else if err := names.Check(s); err != nil {
			d.add("name", CodeNameInvalid, "%v", err)
		}
	}
	return s
}

// tags decodes the tags: strings of 1 to 64 characters, at most 50, none repeated.
func (d *decoder) tags() []string {
	tags, ok := d.strings("tags", CodeTagsInvalid)
	if !ok {
		return nil
	}
	if len(tags) > MaxTags {
		d.add("tags", CodeTagsInvalid, "may hold at most %d tags, got %d", MaxTags, len(tags))
	}
	for i, t := range tags {
		switch n := runes(t); {
		case n < 1 || n > MaxTagLen:
			d.add("tags", CodeTagsInvalid, "item %d must be 1 to %d characters long, got %d", i, MaxTagLen, n)
		case names.Check(t) != nil:
			d.add("tags", CodeTagsInvalid, "item %d %v", i, names.Check(t))
		case contains(tags[:i], t):
			d.add("tags", CodeTagsInvalid, "item %d repeats %q", i, t)
		}
	}
	return tags
}

// group decodes notification_group and checks that the account has it.
func (d *decoder) group(opts Options) string {
	g, ok := d.str("notification_group", CodeNotificationGroupInvalid)
	switch {
	case !ok || g == "":
		return ""
	case runes(g) > MaxGroupName:
		d.add("notification_group", CodeNotificationGroupInvalid, "must be at most %d characters long", MaxGroupName)
	case opts.GroupExists != nil && !opts.GroupExists(g):
		d.add("notification_group", CodeNotificationGroupInvalid, "names no notification group of the account: %q", g)
	}
	return g
}

// ping decodes the fields of a ping manifest.
func (d *decoder) ping(m *Manifest) {
	m.TimeoutSeconds, _ = d.integer("timeout_seconds", MinTimeout, MaxTimeout, CodeTimeoutOutOfRange, true)
	if n, ok := d.integer("expected_interval_seconds", MinInterval, MaxIntervalSeconds, CodeIntervalOutOfRange, false); ok {
		m.ExpectedIntervalSeconds = &n
	}
	d.schedule(m, false)
	if d.has("schedule") && d.has("expected_interval_seconds") {
		d.add("schedule", CodeScheduleConflict, "and expected_interval_seconds exclude each other: a ping monitor expects its runs either on a schedule or every so many seconds")
	}
	if n, ok := d.integer("grace_seconds", MinGrace, MaxGrace, CodeGraceOutOfRange, false); ok {
		m.GraceSeconds = &n
	}
	// display_name and project: "" means none; any other value is a name.
	if s, ok := d.str("display_name", CodeDisplayNameInvalid); ok {
		if n := runes(s); n > MaxDisplayName {
			d.add("display_name", CodeDisplayNameInvalid, "must be at most %d characters long, got %d", MaxDisplayName, n)
		} else if err := names.Check(s); s != "" && err != nil {
			d.add("display_name", CodeDisplayNameInvalid, "%v", err)
		}
		m.DisplayName = s
	}
	if s, ok := d.str("project", CodeProjectInvalid); ok {
		if n := runes(s); n > MaxProject {
			d.add("project", CodeProjectInvalid, "must be at most %d characters long, got %d", MaxProject, n)
		} else if err := names.Check(s); s != "" && err != nil {
			d.add("project", CodeProjectInvalid, "%v", err)
		}
		m.Project = &s
	}
}

// regionOK reports whether s is a region name: 1 to 64 of a-z 0-9 -.
func regionOK(s string) bool {
	if len(s) < 1 || len(s) > MaxRegionLen {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// regions decodes the optional regions of a check. An empty array is the same as none.
func (d *decoder) regions() []string {
	rs, ok := d.strings("regions", CodeRegionsInvalid)
	if !ok {
		return nil
	}
	if len(rs) > MaxRegions {
		d.add("regions", CodeRegionsInvalid, "may hold at most %d regions, got %d", MaxRegions, len(rs))
	}
	for i, r := range rs {
		switch {
		case !regionOK(r):
			d.add("regions", CodeRegionsInvalid, "item %d must be 1 to %d of the characters a-z 0-9 -, got %q", i, MaxRegionLen, r)
		case contains(rs[:i], r):
			d.add("regions", CodeRegionsInvalid, "item %d repeats %q", i, r)
		}
	}
	return rs
}
