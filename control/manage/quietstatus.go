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
// at runtime (null: until resumed), with its reason.
type quietStatus struct {
	PausedUntil json.RawMessage `json:"paused_until,omitempty"`
	PauseReason string          `json:"pause_reason,omitempty"`
}

// quietStatusOf is m's quiet status.
func quietStatusOf(m *statev1.Monitor) quietStatus {
	var out quietStatus
	if q := m.GetQuiet(); q.GetPaused() {
		out.PausedUntil = json.RawMessage("null")
		if u := q.GetPausedUntilUnixMs(); u > 0 {
			out.PausedUntil, _ = json.Marshal(*rfc3339(u))
		}
		out.PauseReason = q.GetPauseReason()
	}
	return out
}
