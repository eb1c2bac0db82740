package manage

import (
	"sort"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// toManifest turns a stored monitor into its manifest (with uuid) as the
// API shows it: secrets masked (manifest.Masked).
func toManifest(m *statev1.Monitor) manifest.Manifest {
	return manifest.Masked(storedManifest(m))
}

// storedManifest turns a stored monitor into its manifest with its
// secrets (state.MonitorManifest): what a write resolves a request
// against. Never shown.
func storedManifest(m *statev1.Monitor) manifest.Manifest { return state.MonitorManifest(m) }

// toSpec turns a resolved manifest into what the state stores. keepProject
// leaves the stored project as it is (the request had no project key).
func toSpec(m manifest.Manifest, keepProject bool) *raftv1.MonitorSpec {
	s := &raftv1.MonitorSpec{
		Uuid:                    m.UUID,
		Kind:                    m.Kind,
		Name:                    m.Name,
		Enabled:                 m.Enabled,
		Tags:                    m.Tags,
		NotificationGroup:       m.NotificationGroup,
		DisplayName:             m.DisplayName,
		TimeoutSeconds:          m.TimeoutSeconds,
		ExpectedIntervalSeconds: m.ExpectedIntervalSeconds,
		GraceSeconds:            m.GraceSeconds,
		Schedule:                m.Schedule,
		Timezone:                m.Timezone,
		Regions:                 m.Regions,
	}
	if m.ConfirmRegions > 0 {
		n := m.ConfirmRegions
		s.ConfirmRegions = &n
	}
	if m.FailureThreshold > 0 {
		n := m.FailureThreshold
		s.FailureThreshold = &n
	}
	if m.RemindEverySeconds > 0 {
		n := m.RemindEverySeconds
		s.RemindEverySeconds = &n
	}
	for _, d := range m.DependsOn {
		s.DependsOn = append(s.DependsOn, &raftv1.Dependency{Kind: d.Kind, Name: d.Name})
	}
	if !keepProject {
		p := ""
		if m.Project != nil {
			p = *m.Project
		}
		s.Project = &p
	}
	if m.Kind != manifest.KindPing {
		s.Config = checkConfig(m.Config)
	}
	return s
}

// checkConfig is the stored form of a check's config (headers sorted by
// name, so equal configs encode alike).
func checkConfig(c manifest.Config) *raftv1.CheckConfig {
	out := &raftv1.CheckConfig{
		Url: c.URL, Method: c.Method, Timeout: int64(c.Timeout), ExpectedStatuses: c.ExpectedStatuses,
		ExpectedContent: c.ExpectedContent, ContentAbsent: c.ContentAbsent, Body: c.Body, NoRedirects: !c.Follows(),
		MaxResponseMs: int64(c.MaxResponseMs), Ca: c.CA, TlsSkipVerify: c.TLSSkipVerify, ClientCert: c.ClientCert, ClientKey: c.ClientKey,
		Domain: c.Domain, Port: int64(c.Port), WarningDays: int64(c.WarningDays), AlertDays: int64(c.AlertDays),
		Host: c.Host, Send: c.Send, Expect: c.Expect,
		DnsName: c.Name, DnsType: c.Type, DnsServer: c.Server, DnsExpected: c.Expected,
	}
	if c.ExpectedStatus != nil {
		v := int64(*c.ExpectedStatus)
		out.ExpectedStatus = &v
	}
	names := make([]string, 0, len(c.Headers))
	for name := range c.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out.Headers = append(out.Headers, &raftv1.HTTPHeader{Name: name, Value: c.Headers[name]})
	}
	if a := c.BasicAuth; a != nil {
		out.BasicAuth = &raftv1.HTTPBasicAuth{Username: a.Username, Password: a.Password}
	}
	for _, a := range c.JSONPath {
		out.JsonPath = append(out.JsonPath, &raftv1.JSONPathAssertion{Path: a.Path, EqualsJson: string(a.Equals)})
	}
	return out
}
