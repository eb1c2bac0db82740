package manage

import (
	"encoding/json"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// stateStatusPaused is the state of a paused monitor: disabled in its
// manifest, or paused at runtime (then with paused_until).
const stateStatusPaused = "paused"

// quietStatus is what the alert rules add to a monitor's status
// (decisions.md 12), both kinds: paused_until while the monitor is paused
// at runtime (null: until resumed), with its reason; the maintenance
// window that holds it now, with the end of its occurrence; held_by, the
// first monitor it depends on that is down.
type quietStatus struct {
	PausedUntil json.RawMessage `json:"paused_until,omitempty"`
	PauseReason string          `json:"pause_reason,omitempty"`
	Maintenance *maintenanceRef `json:"maintenance,omitempty"`
	HeldBy      *dependencyRef  `json:"held_by,omitempty"`
}

// dependencyRef names the monitor a monitor depends on that is down.
type dependencyRef struct {
	UUID string `json:"uuid"`
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// maintenanceRef names the window a monitor is in.
type maintenanceRef struct {
	ID     string `json:"id"`
	EndsAt string `json:"ends_at"`
}

// quietStatusOf is m's quiet status.
func (a *API) quietStatusOf(m *statev1.Monitor) quietStatus {
	var out quietStatus
	w, end, err := a.state.MonitorInWindow(m, a.now().UnixMilli())
	if err != nil {
		a.log.Warn("reading the maintenance windows failed", "monitor", m.GetUuid(), "error", err)
	}
	if w != nil {
		out.Maintenance = &maintenanceRef{ID: w.GetId(), EndsAt: *rfc3339(end.UnixMilli())}
	}
	deps, err := a.state.Dependencies(m)
	if err != nil {
		a.log.Warn("reading a monitor's dependencies failed", "monitor", m.GetUuid(), "error", err)
	}
	for _, d := range deps {
		if d.Down {
			out.HeldBy = &dependencyRef{UUID: d.Monitor.GetUuid(), Kind: d.Kind, Name: d.Name}
			break
		}
	}
	if q := m.GetQuiet(); q.GetPaused() {
		out.PausedUntil = json.RawMessage("null")
		if u := q.GetPausedUntilUnixMs(); u > 0 {
			out.PausedUntil, _ = json.Marshal(*rfc3339(u))
		}
		out.PauseReason = q.GetPauseReason()
	}
	return out
}
