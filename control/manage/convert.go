package manage

import (
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
)

// toManifest turns a stored monitor into its manifest (with uuid): the
// state's own conversion, which the audit log's diffs use too.
func toManifest(m *statev1.Monitor) manifest.Manifest { return state.MonitorManifest(m) }

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
