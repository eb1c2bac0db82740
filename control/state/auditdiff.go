package state

import (
	"encoding/json"
	"reflect"
	"sort"
	"time"
	"unicode/utf8"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
	"lookout/internal/mask"
)

// The diff of an audit entry: each changed field with [before, after], as
// JSON-ready values (nil for unset). Secrets never get here: keys are
// recorded by name, type and scopes (never their hash), passwords and
// badge keys only as the fact of a change, and every string of a channel's
// config (and of the configs of a group's channels) masked as the operator
// API masks a secret (mask.JSON): the state does not know which field of which channel
// type is the secret, so it shows none of them.
//
// An entry stays small, so that the entries of a whole apply fit its
// transaction (limits.go): a value is cut to maxAuditValueBytes (a list or
// object longer than that becomes its JSON text, cut), a target's name
// too, and once a diff holds maxAuditDiffBytes the fields after it (in
// name order) show cutMark on both sides.
const (
	maxAuditValueBytes = 256
	maxAuditDiffBytes  = 2048
	cutMark            = "…"
)

// diffJSON is the bounded JSON of d; nil when d is empty.
func diffJSON(d map[string][2]any) []byte {
	if len(d) == 0 {
		return nil
	}
	fields := make([]string, 0, len(d))
	for f := range d {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	out := make(map[string][2]any, len(d))
	size := 0
	for _, f := range fields {
		pair := [2]any{cutValue(d[f][0]), cutValue(d[f][1])}
		b, _ := json.Marshal(pair)
		if size += len(f) + len(b); size > maxAuditDiffBytes {
			pair = [2]any{cutMark, cutMark}
		}
		out[f] = pair
	}
	b, err := json.Marshal(out) // map keys in order: the same bytes on every node
	if err != nil {
		return nil
	}
	return b
}

// cutValue bounds one side of a diff.
func cutValue(v any) any {
	switch v := v.(type) {
	case nil, bool, int, int64, float64:
		return v
	case string:
		return cutString(v, maxAuditValueBytes)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return cutMark
	}
	if len(b) > maxAuditValueBytes {
		return cutString(string(b), maxAuditValueBytes)
	}
	return v
}

// cutString is s cut to at most n bytes at a character boundary, with
// cutMark when it was cut.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cutMark
}

// fieldDiff compares two records given as field -> value (nil: the record
// does not exist): every field whose values differ, with nil for a side
// that lacks it.
func fieldDiff(before, after map[string]any) map[string][2]any {
	out := map[string][2]any{}
	for f, a := range after {
		if b := before[f]; !reflect.DeepEqual(a, b) {
			out[f] = [2]any{b, a}
		}
	}
	for f, b := range before {
		if _, ok := after[f]; !ok && b != nil {
			out[f] = [2]any{b, nil}
		}
	}
	return out
}

// monitorDiff is the diff of a monitor from before to after (nil: it does
// not exist): manifest.Diff of their manifests, or every field that is set
// when one side is missing.
func monitorDiff(before, after *statev1.Monitor) map[string][2]any {
	switch {
	case before == nil && after == nil:
		return nil
	case before == nil:
		return manifestFields(MonitorManifest(after), false)
	case after == nil:
		return manifestFields(MonitorManifest(before), true)
	}
	return manifest.Diff(MonitorManifest(before), MonitorManifest(after))
}

// manifestFields is every field of m that is set, as [nil, value], or as
// [value, nil] when gone.
func manifestFields(m manifest.Manifest, gone bool) map[string][2]any {
	d := manifest.Diff(manifest.Manifest{}, m)
	d["enabled"] = [2]any{nil, m.Enabled}
	for f, v := range d {
		d[f] = [2]any{nil, v[1]}
		if gone {
			d[f] = [2]any{v[1], nil}
		}
	}
	return d
}

// keyFields are what the audit log shows of a key: never its hash.
func keyFields(k *raftv1.Key) map[string]any {
	if k == nil {
		return nil
	}
	typ := "ingest"
	if k.GetType() == raftv1.KeyType_KEY_TYPE_MANAGEMENT {
		typ = "management"
	}
	out := map[string]any{"name": k.GetName(), "type": typ}
	if len(k.GetScopes()) > 0 {
		out["scopes"] = append([]string(nil), k.GetScopes()...)
	}
	return out
}

// planFields are a plan's limits (nil for one without a limit).
func planFields(p *raftv1.Plan) map[string]any {
	if p == nil {
		return nil
	}
	return map[string]any{
		"name": p.GetName(), "monitor_limit": optInt(p.MonitorLimit), "monthly_event_limit": optInt(p.MonthlyEventLimit),
		"quota_grace_seconds": p.GetQuotaGraceSeconds(), "config_as_code": p.GetConfigAsCode(),
		"ingest_rate_per_second": p.GetIngestRatePerSecond(), "ingest_burst": p.GetIngestBurst(),
		"monitors_created_per_minute": optInt(p.MonitorsCreatedPerMinute),
	}
}

func optInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// channelFields are a channel's type, name and default flag, and each
// field of its config as config.<field>, masked (mask.JSON).
func channelFields(c *statev1.Channel) map[string]any {
	if c == nil {
		return nil
	}
	out := map[string]any{"type": c.GetType(), "name": c.GetName(), "default": c.GetIsDefault()}
	var config map[string]any
	if json.Unmarshal(c.GetConfigJson(), &config) == nil {
		for f, v := range config {
			out["config."+f] = mask.JSON(v)
		}
	}
	return out
}

// groupFields are a group's name and channels, each channel's config
// masked (mask.JSON): its type, name and channel_id are no secrets.
func groupFields(g *statev1.NotificationGroup) map[string]any {
	if g == nil {
		return nil
	}
	var channels []map[string]any
	var shown any
	if json.Unmarshal(g.GetChannelsJson(), &channels) == nil {
		list := make([]any, len(channels))
		for i, ch := range channels {
			if c, ok := ch["config"]; ok {
				ch["config"] = mask.JSON(c)
			}
			list[i] = ch
		}
		shown = list
	} else {
		var raw any
		if json.Unmarshal(g.GetChannelsJson(), &raw) == nil {
			shown = mask.JSON(raw)
		}
	}
	return map[string]any{"name": g.GetName(), "channels": shown}
}

// pageFields are what a status page shows and matches.
func pageFields(p *statev1.StatusPage) map[string]any {
	if p == nil {
		return nil
	}
	m := p.GetMatch()
	return map[string]any{
		"enabled": p.GetEnabled(), "slug": p.GetSlug(), "title": p.GetTitle(),
		"match.monitors": list(m.GetMonitors()), "match.tags": list(m.GetTags()), "match.projects": list(m.GetProjects()),
	}
}

// list is a copy of s, never nil, so that an empty list compares equal to
// one read back.
func list(s []string) []string { return append([]string{}, s...) }

// windowFields are the fields of a maintenance window an entry shows (nil
// for none).
func windowFields(win *raftv1.MaintenanceWindow) map[string]any {
	if win == nil {
		return nil
	}
	out := map[string]any{"name": win.GetName(), "schedule": orNil(win.GetSchedule()), "timezone": orNil(win.GetTimezone()),
		"starts_at": timeOrNil(win.GetStartsUnixMs()), "ends_at": timeOrNil(win.GetEndsUnixMs()),
		"match.monitors": list(win.GetMatch().GetMonitors()), "match.tags": list(win.GetMatch().GetTags()),
		"match.projects": list(win.GetMatch().GetProjects())}
	if d := win.GetDurationSeconds(); d > 0 {
		out["duration_seconds"] = d
	}
	return out
}

// timeOrNil is a Unix ms time in RFC 3339 UTC, nil for 0.
func timeOrNil(ms int64) any {
	if ms == 0 {
		return nil
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

// orNil is s, nil when it is empty.
func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
