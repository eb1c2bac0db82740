package manage

import (
	"time"

	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/manifest"
	"lookout/internal/pingstate"
)

// monitorStatus is the read-only engine state of a ping monitor in
// GET /api/v1/monitors/{uuid}. It is not part of the manifest: ignored in
// requests, left out of export and of apply's diff.
type monitorStatus struct {
	State      string  `json:"state"`
	LastPingAt *string `json:"last_ping_at"`
	// NextExpectedAt is when the next run is expected (without grace);
	// NextDeadlineAt when it would alert.
	NextExpectedAt *string  `json:"next_expected_at"`
	NextDeadlineAt *string  `json:"next_deadline_at"`
	LastDuration   *float64 `json:"last_duration"`
	quietStatus
}

// monitorWithStatus is a manifest with its status.
type monitorWithStatus struct {
	manifest.Manifest
	// Status is a *monitorStatus (ping) or a *checkStatus.
	Status any `json:"status,omitempty"`
}

// withStatus adds the status of a monitor to its manifest.
func (a *API) withStatus(m *statev1.Monitor) monitorWithStatus {
	if m.GetKind() != manifest.KindPing {
		return a.withCheckStatus(m)
	}
	out := withStatus(m)
	out.Status.(*monitorStatus).quietStatus = a.quietStatusOf(m)
	if m.GetEnabled() && out.Status.(*monitorStatus).State != stateStatusPaused && a.inOfflineRegion(m) {
		out.Status.(*monitorStatus).State = stateUnknown
	}
	return out
}

// stateUnknown is the status of an enabled monitor whose agent region is
// offline: a ping monitor whose newest ping came through it, a check all of
// whose regions are offline.
const stateUnknown = "unknown"

// inOfflineRegion tells whether m is shown unknown (false when it cannot
// be read: the status is then the engine's).
func (a *API) inOfflineRegion(m *statev1.Monitor) bool {
	off, err := a.state.InOfflineRegion(m)
	if err != nil {
		a.log.Warn("reading a region's state failed", "monitor", m.GetUuid(), "error", err)
	}
	return off
}

// withStatus adds the status of a ping monitor to its manifest.
func withStatus(m *statev1.Monitor) monitorWithStatus {
	out := monitorWithStatus{Manifest: toManifest(m)}
	if m.GetKind() != manifest.KindPing {
		return out
	}
	st := state.PingState(m)
	s := &monitorStatus{State: st.State}
	if m.GetQuiet().GetPaused() {
		s.State = stateStatusPaused
	}
	if st.LastPingMs > 0 {
		s.LastPingAt = rfc3339(st.LastPingMs)
	}
	if next := state.NextExpected(m); next > 0 {
		s.NextExpectedAt = rfc3339(next)
	}
	// The next alert if no ping comes (the late step, which does not
	// alert, is not one).
	timeout, _, missed := pingstate.Deadlines(state.PingSettings(m), st)
	if next := pingstate.Earliest(timeout, missed); next > 0 {
		s.NextDeadlineAt = rfc3339(next)
	}
	if st.LastDurationMs > 0 || st.State == pingstate.Up || st.State == pingstate.Failed {
		d := float64(st.LastDurationMs) / 1000
		s.LastDuration = &d
	}
	out.Status = s
	return out
}

func rfc3339(ms int64) *string {
	s := time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
	return &s
}
