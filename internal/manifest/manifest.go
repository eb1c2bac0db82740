// Package manifest is the one source of truth for monitor manifests and bundles
// (docs/api.md, Management API): their types, how they are decoded and validated,
// their canonical form, comparison and field-level diff, and their YAML form. The API,
// apply and the CLI all validate through Parse and ParseBundle.
//
// See DESIGN.md beside this file for why it decides as it does where the field tables
// leave a choice open.
package manifest

import (
	"encoding/json"
	"sort"
	"strings"
)

// Version is the only supported manifest_version.
const Version = 1

// Kinds of monitor.
const (
	KindPing  = "ping"
	KindHTTP  = "http_check"
	KindSSL   = "ssl_check"
	KindTCP   = "tcp_check"
	KindDNS   = "dns_check"
	kindsList = "ping, http_check, ssl_check, tcp_check or dns_check"
)

// CheckKinds are the kinds of check, which share one name space.
var CheckKinds = []string{KindHTTP, KindSSL, KindTCP, KindDNS}

// IsCheck reports whether kind is a kind of check.
func IsCheck(kind string) bool { return contains(CheckKinds, kind) }

// KnownKind reports whether kind is a kind of monitor.
func KnownKind(kind string) bool { return kind == KindPing || IsCheck(kind) }

// Manifest is one monitor. JSON field names are the Management API's. Only the fields of
// its kind are set; Canonical clears the others.
type Manifest struct {
	// UUID is read-only: set in responses, ignored in requests and absent from bundles.
	UUID            string `json:"uuid,omitempty"`
	ManifestVersion int    `json:"manifest_version"`
	Kind            string `json:"kind"`
	Name            string `json:"name"`
	// Enabled defaults to true when the key is absent from a request.
	Enabled bool `json:"enabled"`
	// Tags keep the order in which they were sent; nil and empty are equal.
	Tags []string `json:"tags"`
	// NotificationGroup is the name of a group of the account; empty for none.
	NotificationGroup string `json:"notification_group,omitempty"`

	// Ping fields.
	TimeoutSeconds          int64  `json:"timeout_seconds,omitempty"`
	ExpectedIntervalSeconds *int64 `json:"expected_interval_seconds,omitempty"`
	GraceSeconds            *int64 `json:"grace_seconds,omitempty"`
	DisplayName             string `json:"display_name,omitempty"`
	// Project is nil when the key was absent from a request, which leaves the stored
	// project untouched (see Resolve); "" removes the monitor from its project.
	Project *string `json:"project,omitempty"`

	// Schedule is a check's schedule, or a ping monitor's: when its runs are
	// expected (instead of ExpectedIntervalSeconds). Timezone is the IANA
	// zone its cron times are read in; canonical form fills in UTC when
	// there is a schedule and clears it when there is none.
	Schedule string `json:"schedule,omitempty"`
	Timezone string `json:"timezone,omitempty"`

	// Check fields.
	Regions []string `json:"regions,omitempty"`
	// ConfirmRegions is how many of Regions must see the check fail in the
	// same slot before it is down: 1 to len(Regions), only
	// with regions; canonical form fills in 1.
	ConfirmRegions int64 `json:"confirm_regions,omitempty"`
	// FailureThreshold is how many consecutive failed slots a check needs
	// before check.failed (decisions.md 12): 1 to 10, 0 when unset (1).
	FailureThreshold int64  `json:"failure_threshold,omitempty"`
	Config           Config `json:"config,omitzero"`

	// RemindEverySeconds (every kind) is the period of reminders while the
	// monitor stays down after its failure alert: 300 to 604800, 0 for
	// none.
	RemindEverySeconds int64 `json:"remind_every_seconds,omitempty"`
	// DependsOn (every kind) names monitors of the account whose being
	// down holds this one's failure alerts; order kept, nil when none.
	DependsOn []Dependency `json:"depends_on,omitempty"`
}

// Config is the config object of a check: the fields of its kind (see
// the key lists below); Canonical clears the others. Secrets (the values
// of SecretHeader headers, BasicAuth.Password, ClientKey) are stored as
// given and shown as Mask (see Masked).
type Config struct {
	// http_check
	URL            string `json:"url,omitempty"`
	Method         string `json:"method,omitempty"`  // default GET
	Timeout        int    `json:"timeout,omitempty"` // seconds, default 10 (also tcp_check and dns_check)
	ExpectedStatus *int   `json:"expected_status,omitempty"`
	// ExpectedStatuses is expected_status given as a class ("2xx") or a
	// list of statuses and classes, as strings ("204", "3xx"); JSON shows
	// it under expected_status (see MarshalJSON). Canonical form keeps a
	// single status in ExpectedStatus instead.
	ExpectedStatuses []string          `json:"-"`
	ExpectedContent  string            `json:"expected_content,omitempty"` // "" counts as unset
	ContentAbsent    string            `json:"content_absent,omitempty"`
	Headers          map[string]string `json:"headers,omitempty"`
	Body             string            `json:"body,omitempty"`
	BasicAuth        *BasicAuth        `json:"basic_auth,omitempty"`
	// FollowRedirects is nil for the default, true; canonical form keeps
	// only false.
	FollowRedirects *bool               `json:"follow_redirects,omitempty"`
	JSONPath        []JSONPathAssertion `json:"json_path,omitempty"`
	MaxResponseMs   int                 `json:"max_response_ms,omitempty"`
	CA              string              `json:"ca,omitempty"` // also ssl_check
	TLSSkipVerify   bool                `json:"tls_skip_verify,omitempty"`
	ClientCert      string              `json:"client_cert,omitempty"`
	ClientKey       string              `json:"client_key,omitempty"`

	// ssl_check
	Domain      string `json:"domain,omitempty"`
	Port        int    `json:"port,omitempty"`         // also tcp_check
	WarningDays int    `json:"warning_days,omitempty"` // default 30
	AlertDays   int    `json:"alert_days,omitempty"`   // default min(7, WarningDays)

	// tcp_check
	Host   string `json:"host,omitempty"`
	Send   string `json:"send,omitempty"`
	Expect string `json:"expect,omitempty"`

	// dns_check
	Name     string   `json:"name,omitempty"`
	Type     string   `json:"type,omitempty"` // default A
	Server   string   `json:"server,omitempty"`
	Expected []string `json:"expected,omitempty"`
}

// BasicAuth is the basic_auth of an http_check; the password is a secret.
type BasicAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// JSONPathAssertion is one json_path assertion of an http_check: the
// value at Path (internal/jsonpath) equals Equals, a JSON scalar.
type JSONPathAssertion struct {
	Path   string          `json:"path"`
	Equals json.RawMessage `json:"equals"`
}

// Options carries what validation needs to know about the account.
type Options struct {
	// GroupExists reports whether the account has a notification group of that name.
	// Nil skips the check (the CLI validates offline).
	GroupExists func(name string) bool
}

// Keys each kind accepts, besides uuid and status, which are accepted and ignored
// everywhere.
var (
	commonKeys = []string{"manifest_version", "kind", "name", "enabled", "tags", "notification_group", "remind_every_seconds", "depends_on"}
	pingKeys   = []string{"timeout_seconds", "expected_interval_seconds", "grace_seconds", "display_name", "project", "schedule", "timezone"}
	checkKeys  = []string{"schedule", "timezone", "regions", "confirm_regions", "failure_threshold", "config"}
	httpKeys   = []string{"url", "method", "timeout", "expected_status", "expected_content", "content_absent", "headers", "body",
		"basic_auth", "follow_redirects", "json_path", "max_response_ms", "ca", "tls_skip_verify", "client_cert", "client_key"}
	sslKeys = []string{"domain", "port", "warning_days", "alert_days", "ca"}
	tcpKeys = []string{"host", "port", "timeout", "send", "expect"}
	dnsKeys = []string{"name", "type", "server", "expected", "timeout"}
)

// Parse decodes and validates one manifest from raw JSON, field by field, and returns
// every problem at once. The manifest is in canonical form; it is meaningful only when
// there are no errors.
func Parse(raw json.RawMessage, opts Options) (Manifest, Errors) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		msg := "the manifest is not valid JSON"
		if json.Valid(raw) {
			msg = "the manifest must be a JSON object"
		}
		return Manifest{}, Errors{{Code: CodeInvalidJSON, Message: msg}}
	}
	return parseFields(fields, opts, false)
}

// parseFields validates a decoded object. In a bundle, manifest_version may be left out of
// an entry, which then takes the bundle's.
func parseFields(fields map[string]json.RawMessage, opts Options, inBundle bool) (Manifest, Errors) {
	var errs Errors
	d := &decoder{fields: fields, errs: &errs}
	m := Manifest{ManifestVersion: Version, Enabled: true}

	if r, ok := d.raw("manifest_version"); ok {
		if n, ok := parseInt(r); !ok || n != Version {
			d.add("manifest_version", CodeManifestVersionUnsupported, "must be 1, got %s", excerpt(r))
		}
	} else if !inBundle {
		d.missing("manifest_version", CodeManifestVersionUnsupported, "1")
	}

	kind, ok := d.str("kind", CodeKindInvalid)
	switch {
	case !ok && !d.has("kind"):
		d.missing("kind", CodeKindInvalid, kindsList)
	case ok && !KnownKind(kind):
		d.add("kind", CodeKindInvalid, "must be %s, got %q", kindsList, kind)
	}
	m.Kind = kind

	m.Name = d.name(kind)
	if b, present := d.raw("enabled"); present {
		if err := json.Unmarshal(b, &m.Enabled); err != nil {
			d.add("enabled", CodeEnabledInvalid, "must be true or false, got %s", excerpt(b))
		}
	}
	m.Tags = d.tags()
	m.NotificationGroup = d.group(opts)
	m.RemindEverySeconds, _ = d.integer("remind_every_seconds", MinRemindEvery, MaxRemindEvery, CodeRemindEveryOutOfRange, false)
	m.DependsOn = d.dependsOn(m)

	// uuid and status are read-only parts of a response: a manifest read
	// from the API may be sent back as it is.
	allowed := append([]string{"uuid", "status"}, commonKeys...)
	switch kind {
	case KindPing:
		d.ping(&m)
		allowed = append(allowed, pingKeys...)
	case KindHTTP, KindSSL, KindTCP, KindDNS:
		d.check(&m)
		allowed = append(allowed, checkKeys...)
	default: // the kind is already reported; only keys that no kind has are unknown
		allowed = append(append(allowed, pingKeys...), checkKeys...)
	}
	d.unknown(allowed, kind)
	return Canonical(m), errs
}

// unknown records every key outside allowed, in name order.
func (d *decoder) unknown(allowed []string, kind string) {
	var extra []string
	for k := range d.fields {
		if !contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		known := contains(pingKeys, k) || contains(checkKeys, k)
		if d.prefix != "" {
			known = contains(httpKeys, k) || contains(sslKeys, k) || contains(tcpKeys, k) || contains(dnsKeys, k)
		}
		if known {
			d.add(k, CodeFieldUnknown, "does not apply to kind %s", kind)
		} else {
			d.add(k, CodeFieldUnknown, "is not a known field")
		}
	}
}

// unknownCoded records every key outside allowed with code, in name order
// (the keys of a nested object such as basic_auth).
func (d *decoder) unknownCoded(allowed []string, code string) {
	var extra []string
	for k := range d.fields {
		if !contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		d.add(k, code, "is not a known field (%s)", strings.Join(allowed, ", "))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pingNameOK reports whether s uses only the characters of a ping slug.
func pingNameOK(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
