package state

import (
	"encoding/json"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// MonitorManifest turns a stored monitor into its manifest (with uuid) in
// canonical form, secrets included: what the Management API shows once
// masked (manifest.Masked), what a write resolves a request against, and
// what the audit log's diffs of monitors compare (manifest.Diff masks the
// secrets it shows).
func MonitorManifest(m *statev1.Monitor) manifest.Manifest {
	out := manifest.Manifest{
		UUID:               m.GetUuid(),
		ManifestVersion:    1,
		Kind:               m.GetKind(),
		Name:               m.GetName(),
		Enabled:            m.GetEnabled(),
		Tags:               m.GetTags(),
		NotificationGroup:  m.GetNotificationGroup(),
		RemindEverySeconds: m.GetRemindEverySeconds(),
	}
	for _, d := range m.GetDependsOn() {
		out.DependsOn = append(out.DependsOn, manifest.Dependency{Kind: d.GetKind(), Name: d.GetName()})
	}
	switch m.GetKind() {
	case manifest.KindPing:
		out.TimeoutSeconds = m.GetTimeoutSeconds()
		out.ExpectedIntervalSeconds = m.ExpectedIntervalSeconds
		out.Schedule, out.Timezone = m.GetSchedule(), m.GetTimezone()
		out.GraceSeconds = m.GraceSeconds
		out.DisplayName = m.GetDisplayName()
		if p := m.GetProject(); p != "" {
			out.Project = &p
		}
	default:
		out.Schedule, out.Timezone = m.GetSchedule(), m.GetTimezone()
		out.Regions = m.GetRegions()
		out.ConfirmRegions = m.GetConfirmRegions()
		out.FailureThreshold = m.GetFailureThreshold()
		out.Config = configOf(m.GetConfig())
	}
	return manifest.Canonical(out)
}

// configOf is the manifest config of a stored check config.
func configOf(c *raftv1.CheckConfig) manifest.Config {
	out := manifest.Config{
		URL: c.GetUrl(), Method: c.GetMethod(), Timeout: int(c.GetTimeout()),
		ExpectedStatuses: c.GetExpectedStatuses(), ExpectedContent: c.GetExpectedContent(), ContentAbsent: c.GetContentAbsent(),
		Body: c.GetBody(), MaxResponseMs: int(c.GetMaxResponseMs()), CA: c.GetCa(), TLSSkipVerify: c.GetTlsSkipVerify(),
		ClientCert: c.GetClientCert(), ClientKey: c.GetClientKey(),
		Domain: c.GetDomain(), Port: int(c.GetPort()), WarningDays: int(c.GetWarningDays()), AlertDays: int(c.GetAlertDays()),
		Host: c.GetHost(), Send: c.GetSend(), Expect: c.GetExpect(),
		Name: c.GetDnsName(), Type: c.GetDnsType(), Server: c.GetDnsServer(), Expected: c.GetDnsExpected(),
	}
	if c != nil && c.ExpectedStatus != nil {
		s := int(c.GetExpectedStatus())
		out.ExpectedStatus = &s
	}
	for _, h := range c.GetHeaders() {
		if out.Headers == nil {
			out.Headers = map[string]string{}
		}
		out.Headers[h.GetName()] = h.GetValue()
	}
	if a := c.GetBasicAuth(); a != nil {
		out.BasicAuth = &manifest.BasicAuth{Username: a.GetUsername(), Password: a.GetPassword()}
	}
	if c.GetNoRedirects() {
		out.FollowRedirects = new(false)
	}
	for _, a := range c.GetJsonPath() {
		out.JSONPath = append(out.JSONPath, manifest.JSONPathAssertion{Path: a.GetPath(), Equals: json.RawMessage(a.GetEqualsJson())})
	}
	return out
}
