package manage

import (
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// toManifest turns a stored monitor into its manifest (with uuid).
func toManifest(m *statev1.Monitor) manifest.Manifest {
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
		c := m.GetConfig()
		out.Config = manifest.Config{
			URL: c.GetUrl(), Method: c.GetMethod(), Timeout: int(c.GetTimeout()),
			ExpectedContent: c.GetExpectedContent(), Domain: c.GetDomain(),
			WarningDays: int(c.GetWarningDays()), AlertDays: int(c.GetAlertDays()),
		}
		if c != nil && c.ExpectedStatus != nil {
			s := int(c.GetExpectedStatus())
			out.Config.ExpectedStatus = &s
		}
	}
	return manifest.Canonical(out)
}

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
		c := m.Config
		s.Config = &raftv1.CheckConfig{
			Url: c.URL, Method: c.Method, Timeout: int64(c.Timeout), ExpectedContent: c.ExpectedContent,
			Domain: c.Domain, WarningDays: int64(c.WarningDays), AlertDays: int64(c.AlertDays),
		}
		if c.ExpectedStatus != nil {
			v := int64(*c.ExpectedStatus)
			s.Config.ExpectedStatus = &v
		}
	}
	return s
}
