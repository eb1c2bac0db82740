package panel

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"lookout/internal/manifest"
)

// The monitor form: one table of fields (monitorFields), each a path of
// the manifest, shown for the kinds that have it. A submitted form becomes
// a manifest's JSON (manifestJSON) that the Management API's own code
// validates and writes, so the panel never judges a value itself: a wrong
// one comes back with the API's code, under the field's path, and is shown
// next to that field. A field added to the manifest is one more entry in
// the table.

// fieldType is how a field is typed in and turned into JSON.
type fieldType string

const (
	// textField is a string; empty leaves the key out.
	textField fieldType = "text"
	// areaField is a string typed in a text area, kept as typed.
	areaField fieldType = "area"
	// numberField is an integer; empty leaves the key out, anything but
	// an integer is sent as the string it is, for the API to refuse with
	// the field's code.
	numberField fieldType = "number"
	// listField is an array of strings, typed separated by commas.
	listField fieldType = "list"
	// checkField is a boolean checkbox.
	checkField fieldType = "check"
	// methodField and groupField are choices: the HTTP methods, the
	// account's notification groups.
	methodField fieldType = "method"
	groupField  fieldType = "group"
)

// Kinds of monitor, as the manifest names them.
var (
	allKinds   = []string{manifest.KindPing, manifest.KindHTTP, manifest.KindSSL}
	pingKind   = []string{manifest.KindPing}
	checkKinds = []string{manifest.KindHTTP, manifest.KindSSL}
	httpKind   = []string{manifest.KindHTTP}
	sslKind    = []string{manifest.KindSSL}
)

// formField is one field of the monitor form.
type formField struct {
	// Key is the manifest's path of the field ("name", "config.url"), the
	// name of its input, and the Field of the API's errors about it.
	Key   string
	Label string
	Type  fieldType
	Kinds []string
	// Group is the part of the form the field is in (a fieldset).
	Group string
	// Required fields are marked; the API decides, not the browser.
	Required bool
	// EmptyIsValue sends "" for an empty input instead of leaving the key
	// out (project: "" takes the monitor out of its project, an absent
	// key would leave it where it is).
	EmptyIsValue bool
	// Immutable fields are shown read-only when editing.
	Immutable   bool
	Placeholder string
	Help        string
}

// Form groups, in the order they are shown.
const (
	groupWhat   = "What to monitor"
	groupWhen   = "When"
	groupWhere  = "Where it runs"
	groupAlerts = "Alerts and labels"
)

var formGroups = []string{groupWhat, groupWhen, groupWhere, groupAlerts}

// httpMethods are the methods an http_check may use.
var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// monitorFields is the form, in the order of the page.
var monitorFields = []formField{
	{Key: "name", Label: "Name", Type: textField, Kinds: pingKind, Group: groupWhat, Required: true, Immutable: true, Placeholder: "e.g. nightly-backup",
		Help: "The name jobs ping: letters, digits, - and _, at most 64. It cannot change later."},
	{Key: "name", Label: "Name", Type: textField, Kinds: checkKinds, Group: groupWhat, Required: true, Placeholder: "e.g. Shop front page",
		Help: "A label, at most 255 characters."},
	{Key: "display_name", Label: "Display name", Type: textField, Kinds: pingKind, Group: groupWhat, Placeholder: "e.g. Nightly backup",
		Help: "Shown instead of the name, at most 255 characters."},
	{Key: "config.url", Label: "URL", Type: textField, Kinds: httpKind, Group: groupWhat, Required: true, Placeholder: "e.g. https://example.com/health",
		Help: "An absolute http or https address."},
	{Key: "config.method", Label: "Method", Type: methodField, Kinds: httpKind, Group: groupWhat},
	{Key: "config.expected_status", Label: "Expected status", Type: numberField, Kinds: httpKind, Group: groupWhat, Placeholder: "e.g. 200",
		Help: "100 to 599. Give this, an expected content, or both."},
	{Key: "config.expected_content", Label: "Expected content", Type: areaField, Kinds: httpKind, Group: groupWhat,
		Help: "Text the response body must contain, at most 4096 characters."},
	{Key: "config.timeout", Label: "Request timeout (seconds)", Type: numberField, Kinds: httpKind, Group: groupWhat, Placeholder: "10",
		Help: "1 to 60; 10 when empty."},
	{Key: "config.domain", Label: "Domain", Type: textField, Kinds: sslKind, Group: groupWhat, Required: true, Placeholder: "e.g. example.com",
		Help: "A host name, optionally with :port (443 when none)."},
	{Key: "config.warning_days", Label: "Warn when fewer days left than", Type: numberField, Kinds: sslKind, Group: groupWhat, Placeholder: "30",
		Help: "1 to 365; 30 when empty."},
	{Key: "config.alert_days", Label: "Alert when fewer days left than", Type: numberField, Kinds: sslKind, Group: groupWhat, Placeholder: "7",
		Help: "1 to 365, at most the warning days; 7 when empty."},
	{Key: "timeout_seconds", Label: "Timeout (seconds)", Type: numberField, Kinds: pingKind, Group: groupWhen, Required: true,
		Help: "The longest a run may take: a run with no complete or fail within it alerts, and so does a longer one. 1 to 604800."},
	{Key: "expected_interval_seconds", Label: "Expected every (seconds)", Type: numberField, Kinds: pingKind, Group: groupWhen, Placeholder: "e.g. 86400",
		Help: "How often the job runs: no ping for this long, plus the grace, alerts as missed. 60 to 31536000; empty: never missed."},
	{Key: "grace_seconds", Label: "Grace (seconds)", Type: numberField, Kinds: pingKind, Group: groupWhen, Placeholder: "0",
		Help: "How late a ping may be before it is missed. 0 to 604800."},
	{Key: "schedule", Label: "Schedule", Type: textField, Kinds: pingKind, Group: groupWhen, Placeholder: "e.g. 30 2 * * *",
		Help: "Instead of an interval: when the job runs, a 5-field cron expression (30 2 * * *, @daily) or an interval (1h), in the time zone below. A ping is expected at the schedule's first time after the last one."},
	{Key: "schedule", Label: "Schedule", Type: textField, Kinds: checkKinds, Group: groupWhen, Required: true, Placeholder: "e.g. 5m",
		Help: "An interval from 30s to 365d (30s, 5m, 1h, 1d) or a 5-field cron expression (0 * * * *) in the time zone below."},
	{Key: "timezone", Label: "Time zone", Type: textField, Kinds: allKinds, Group: groupWhen, Placeholder: "UTC",
		Help: "An IANA zone such as Europe/Berlin, which cron times are read in; UTC when empty."},
	{Key: "regions", Label: "Regions", Type: listField, Kinds: checkKinds, Group: groupWhere, Placeholder: "e.g. eu-1, us-east",
		Help: "Agent regions that run the check, separated by commas. Empty: the control plane runs it."},
	{Key: "confirm_regions", Label: "Regions that must agree it is down", Type: numberField, Kinds: checkKinds, Group: groupWhere, Placeholder: "1",
		Help: "With regions: how many must see it fail in the same run; 1 when empty."},
	{Key: "project", Label: "Project", Type: textField, Kinds: pingKind, Group: groupAlerts, EmptyIsValue: true,
		Help: "Groups the monitor under a project, made when new. At most 100 characters."},
	{Key: "tags", Label: "Tags", Type: listField, Kinds: allKinds, Group: groupAlerts, Placeholder: "e.g. nightly, db",
		Help: "Labels, separated by commas."},
	{Key: "notification_group", Label: "Alerts go to", Type: groupField, Kinds: allKinds, Group: groupAlerts},
	{Key: "enabled", Label: "Enabled", Type: checkField, Kinds: allKinds, Group: groupAlerts,
		Help: "A disabled monitor raises no alerts; a disabled check does not run."},
}

// fieldsOf are the fields of kind, in form order.
func fieldsOf(kind string) []formField {
	var out []formField
	for _, f := range monitorFields {
		if slices.Contains(f.Kinds, kind) {
			out = append(out, f)
		}
	}
	return out
}

// formValues are the inputs of a form as the page shows them: a stored
// manifest's values, or what was typed.
type formValues map[string]string

// valuesOf are the form's inputs for a manifest (its JSON form, as the API
// answers it).
func valuesOf(m manifest.Manifest) formValues {
	fields := manifestMap(m)
	v := formValues{}
	for _, f := range fieldsOf(m.Kind) {
		raw, ok := lookup(fields, f.Key)
		if !ok {
			continue
		}
		switch x := raw.(type) {
		case string:
			v[f.Key] = x
		case bool:
			v[f.Key] = strconv.FormatBool(x)
		case float64:
			v[f.Key] = strconv.FormatInt(int64(x), 10)
		case []any:
			var parts []string
			for _, p := range x {
				if s, ok := p.(string); ok {
					parts = append(parts, s)
				}
			}
			v[f.Key] = strings.Join(parts, ", ")
		}
	}
	// One region to confirm is the default: shown as empty, so that
	// taking the regions away does not leave a confirm_regions behind.
	if v["confirm_regions"] == "1" {
		delete(v, "confirm_regions")
	}
	return v
}

// postedValues are the form's inputs as submitted, for kind.
func postedValues(kind string, form url.Values) formValues {
	v := formValues{}
	for _, f := range fieldsOf(kind) {
		if s := form.Get(f.Key); s != "" {
			v[f.Key] = s
		}
	}
	return v
}

// manifestJSON lays the form's values over base (the monitor's manifest
// as a JSON object: the stored one when editing, the one duplicated, or
// {manifest_version, kind}), so keys the form does not show are kept as
// they are.
func manifestJSON(base map[string]any, kind string, v formValues) json.RawMessage {
	for _, f := range fieldsOf(kind) {
		s := v[f.Key]
		if f.Type != areaField {
			s = strings.TrimSpace(s)
		}
		switch {
		case f.Type == checkField:
			set(base, f.Key, s == "true")
		case s == "" && f.EmptyIsValue:
			set(base, f.Key, "")
		case s == "":
			unset(base, f.Key)
		case f.Type == numberField:
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				set(base, f.Key, n)
			} else {
				set(base, f.Key, s)
			}
		case f.Type == listField:
			var items []string
			for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
				if p := strings.TrimSpace(part); p != "" {
					items = append(items, p)
				}
			}
			set(base, f.Key, items)
		default:
			set(base, f.Key, s)
		}
	}
	base["kind"] = kind
	b, _ := json.Marshal(base)
	return b
}

// manifestMap is m as a JSON object, without its read-only uuid.
func manifestMap(m manifest.Manifest) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	delete(out, "uuid")
	return out
}

// lookup reads path ("config.url") of a JSON object.
func lookup(obj map[string]any, path string) (any, bool) {
	head, rest, nested := strings.Cut(path, ".")
	v, ok := obj[head]
	if !ok || !nested {
		return v, ok
	}
	inner, isObj := v.(map[string]any)
	if !isObj {
		return nil, false
	}
	return lookup(inner, rest)
}

// set writes path of a JSON object, making the objects on the way.
func set(obj map[string]any, path string, v any) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		obj[head] = v
		return
	}
	inner, isObj := obj[head].(map[string]any)
	if !isObj {
		inner = map[string]any{}
		obj[head] = inner
	}
	set(inner, rest, v)
}

// unset removes path of a JSON object.
func unset(obj map[string]any, path string) {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		delete(obj, head)
		return
	}
	if inner, isObj := obj[head].(map[string]any); isObj {
		unset(inner, rest)
	}
}

// problem is one of the API's errors, as the form shows it.
type problem struct {
	Code, Message string
}

// fieldProblems sorts the API's errors by the form's fields: problems[key]
// are shown next to that field (without the field's path the message
// starts with), general ones above the form.
func fieldProblems(kind string, errs manifest.Errors) (problems map[string][]problem, general []problem) {
	problems = map[string][]problem{}
	shown := map[string]bool{}
	for _, f := range fieldsOf(kind) {
		shown[f.Key] = true
	}
	for _, e := range errs {
		if shown[e.Field] {
			problems[e.Field] = append(problems[e.Field], problem{e.Code, strings.TrimPrefix(e.Message, e.Field+" ")})
			continue
		}
		general = append(general, problem{e.Code, e.Message})
	}
	return problems, general
}
