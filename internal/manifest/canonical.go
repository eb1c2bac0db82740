package manifest

import (
	"reflect"
	"strings"

	"lookout/internal/schedule"
)

// Canonical returns m in canonical form, so that two manifests that mean the same compare
// equal: manifest_version 1, defaults filled in (timezone UTC when there is a schedule, none
// without one, config.method GET, config.timeout 10, warning_days 30, alert_days
// min(7, warning_days)), method upper-case, domain lower-case,
// tags never nil (their order kept), empty regions nil, confirm_regions 1 when a check
// with regions does not say (0 without regions), and the fields of other kinds
// cleared. Enabled is kept as is (Parse has already defaulted it to true), and so are
// UUID and Project (see Resolve). The slices and pointers of the result are copies.
func Canonical(m Manifest) Manifest {
	m.ManifestVersion = Version
	m.Tags = append([]string{}, m.Tags...)
	m.ExpectedIntervalSeconds = clonePtr(m.ExpectedIntervalSeconds)
	m.GraceSeconds = clonePtr(m.GraceSeconds)
	m.Project = clonePtr(m.Project)
	if len(m.DependsOn) == 0 {
		m.DependsOn = nil
	} else {
		m.DependsOn = append([]Dependency(nil), m.DependsOn...)
	}
	if len(m.Regions) == 0 {
		m.Regions = nil
	} else {
		m.Regions = append([]string(nil), m.Regions...)
	}
	switch {
	case m.Schedule == "":
		m.Timezone = ""
	case m.Timezone == "":
		m.Timezone = schedule.DefaultZone
	}
	switch m.Kind {
	case KindPing:
		m.Regions, m.ConfirmRegions, m.Config, m.FailureThreshold = nil, 0, Config{}, 0
	case KindHTTP, KindSSL, KindTCP, KindDNS:
		m.ConfirmRegions = canonicalConfirm(m.Regions, m.ConfirmRegions)
		m.TimeoutSeconds, m.ExpectedIntervalSeconds, m.GraceSeconds = 0, nil, nil
		m.DisplayName, m.Project = "", nil
		m.Config = canonicalConfig(m.Kind, m.Config)
	}
	return m
}

// canonicalConfirm is confirm_regions in canonical form: 0 without
// regions, 1 when unset with regions.
func canonicalConfirm(regions []string, n int64) int64 {
	switch {
	case len(regions) == 0:
		return 0
	case n <= 0:
		return 1
	}
	return n
}

// canonicalConfig fills the defaults of a check config and clears the other kinds' keys
// (canonicalHTTP, in checkcanon.go, for an http_check).
func canonicalConfig(kind string, c Config) Config {
	switch kind {
	case KindHTTP:
		c = canonicalHTTP(c)
	case KindSSL:
		c = Config{Domain: strings.ToLower(c.Domain), Port: c.Port, WarningDays: c.WarningDays, AlertDays: c.AlertDays, CA: c.CA}
		if c.WarningDays == 0 {
			c.WarningDays = DefaultWarningDays
		}
		if c.AlertDays == 0 {
			c.AlertDays = min(DefaultAlertDays, c.WarningDays)
		}
	case KindTCP:
		c = Config{Host: strings.ToLower(c.Host), Port: c.Port, Timeout: c.Timeout, Send: c.Send, Expect: c.Expect}
		if c.Timeout == 0 {
			c.Timeout = DefaultCheckTimeout
		}
	case KindDNS:
		c = Config{Name: strings.ToLower(strings.TrimSuffix(c.Name, ".")), Type: strings.ToUpper(c.Type),
			Server: strings.ToLower(c.Server), Timeout: c.Timeout, Expected: cloneList(c.Expected)}
		if c.Type == "" {
			c.Type = DefaultDNSType
		}
		if c.Timeout == 0 {
			c.Timeout = DefaultCheckTimeout
		}
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Resolve turns a request manifest into the state to store, given the stored one (the
// zero Manifest when creating): the UUID is the stored one, an absent project
// (nil) keeps the stored project, and a secret sent as Mask keeps the stored secret
// (see CheckSecrets for a Mask with none stored). An empty project means none and
// becomes nil.
func Resolve(stored, incoming Manifest) Manifest {
	out := restoreSecrets(Canonical(stored), Canonical(incoming))
	out.UUID = stored.UUID
	if out.Project == nil {
		out.Project = clonePtr(stored.Project)
	}
	if out.Project != nil && *out.Project == "" {
		out.Project = nil
	}
	return out
}

// Equal reports whether a and b describe the same monitor state: their canonical forms
// have no field-level difference. UUID is not compared; a nil and an empty Project are
// equal. Call Resolve on a request manifest first, so that an absent project compares as
// the stored one.
func Equal(a, b Manifest) bool {
	return len(Diff(a, b)) == 0
}

// Diff returns the fields whose canonical values differ between before and after, keyed
// by field path (kind, name, enabled, tags, notification_group, timeout_seconds,
// expected_interval_seconds, grace_seconds, display_name, project, schedule, timezone, regions,
// confirm_regions, failure_threshold, remind_every_seconds, depends_on,
// config.url, config.method, config.timeout, config.expected_status,
// config.expected_content, config.domain, config.warning_days, config.alert_days, and
// the options of checks for real endpoints: config.content_absent, config.headers ...
// config.expected, see flatten), each with [old, new] JSON-ready values: string, int64,
// bool, []string, a map or list of them, or nil for unset.
//
// Secrets are compared as they are and shown as Mask: a changed secret is a difference
// whose two sides both read Mask.
func Diff(before, after Manifest) map[string][2]any {
	a, b := flatten(Canonical(before)), flatten(Canonical(after))
	shownA, shownB := flatten(Masked(Canonical(before))), flatten(Masked(Canonical(after)))
	out := map[string][2]any{}
	for i := range a {
		if !reflect.DeepEqual(a[i].value, b[i].value) {
			out[a[i].path] = [2]any{shownA[i].value, shownB[i].value}
		}
	}
	return out
}

type pathValue struct {
	path  string
	value any
}

// flatten lists every comparable field of a canonical manifest, in a fixed order, with
// unset values as nil. Tags are always a (possibly empty) list.
func flatten(m Manifest) []pathValue {
	project := ""
	if m.Project != nil {
		project = *m.Project
	}
	var regions any
	if m.Regions != nil {
		regions = m.Regions
	}
	var deps any
	if m.DependsOn != nil {
		deps = m.DependsOn
	}
	c := m.Config
	return []pathValue{
		{"kind", orNil(m.Kind)},
		{"name", orNil(m.Name)},
		{"enabled", m.Enabled},
		{"tags", m.Tags},
		{"notification_group", orNil(m.NotificationGroup)},
		{"timeout_seconds", intOrNil(m.TimeoutSeconds)},
		{"expected_interval_seconds", ptrOrNil(m.ExpectedIntervalSeconds)},
		{"grace_seconds", ptrOrNil(m.GraceSeconds)},
		{"display_name", orNil(m.DisplayName)},
		{"project", orNil(project)},
		{"schedule", orNil(m.Schedule)},
		{"timezone", orNil(m.Timezone)},
		{"regions", regions},
		{"confirm_regions", confirmOrNil(m.ConfirmRegions)},
		{"failure_threshold", confirmOrNil(m.FailureThreshold)},
		{"remind_every_seconds", intOrNil(m.RemindEverySeconds)},
		{"depends_on", deps},
		{"config.url", orNil(c.URL)},
		{"config.method", orNil(c.Method)},
		{"config.timeout", intOrNil(int64(c.Timeout))},
		{"config.expected_status", expectedStatusValue(c)},
		{"config.expected_content", orNil(c.ExpectedContent)},
		{"config.domain", orNil(c.Domain)},
		{"config.warning_days", intOrNil(int64(c.WarningDays))},
		{"config.alert_days", intOrNil(int64(c.AlertDays))},
		{"config.content_absent", orNil(c.ContentAbsent)},
		{"config.headers", headersValue(c.Headers)},
		{"config.body", orNil(c.Body)},
		{"config.basic_auth", basicAuthValue(c.BasicAuth)},
		{"config.follow_redirects", boolPtrOrNil(c.FollowRedirects)},
		{"config.json_path", jsonPathValue(c.JSONPath)},
		{"config.max_response_ms", intOrNil(int64(c.MaxResponseMs))},
		{"config.ca", orNil(c.CA)},
		{"config.tls_skip_verify", trueOrNil(c.TLSSkipVerify)},
		{"config.client_cert", orNil(c.ClientCert)},
		{"config.client_key", orNil(c.ClientKey)},
		{"config.port", intOrNil(int64(c.Port))},
		{"config.host", orNil(c.Host)},
		{"config.send", orNil(c.Send)},
		{"config.expect", orNil(c.Expect)},
		{"config.name", orNil(c.Name)},
		{"config.type", orNil(c.Type)},
		{"config.server", orNil(c.Server)},
		{"config.expected", listOrNil(c.Expected)},
	}
}

// confirmOrNil is confirm_regions (or failure_threshold) as Diff shows
// it: the default (1) as unset, so that adding regions does not also
// report it.
func confirmOrNil(n int64) any {
	if n <= 1 {
		return nil
	}
	return n
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func intOrNil(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

func ptrOrNil(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
