package state

import (
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// MonitorManifest turns a stored monitor into its manifest (with uuid) in
// canonical form: what the Management API shows, and what the audit
// log's diffs of monitors compare (manifest.Diff).
func MonitorManifest(m *statev1.Monitor) manifest.Manifest {
	out := manifest.Manifest{
		UUID:              m.GetUuid(),
		ManifestVersion:   1,
		Kind:              m.GetKind(),
		Name:              m.GetName(),
		Enabled:           m.GetEnabled(),
		Tags:              m.GetTags(),
		NotificationGroup: m.GetNotificationGroup(),
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
