package public

import (
	"lookout/control/state"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// The statuses badges and status pages show: one vocabulary for every
// kind, coarser than the states of the Management API.
const (
	statusUp      = "up"      // a ping monitor up or running, a check whose last verdict is success
	statusLate    = "late"    // a ping overdue within its grace time
	statusDown    = "down"    // a ping monitor down or failed, a check whose last verdict is failed
	statusPaused  = "paused"  // disabled
	statusNew     = "new"     // no ping or verdict yet
	statusUnknown = "unknown" // its agent region is offline
)

// severity orders statuses for a tag's badge: the tag shows the most
// severe of its monitors' (down if any is down, then late, then up; the
// grey ones only when no monitor of the tag is up, late or down).
var severity = map[string]int{statusDown: 5, statusLate: 4, statusUp: 3, statusUnknown: 2, statusNew: 1, statusPaused: 0}

// statusOf is m's status now; unknownSince is when it became unknown (0:
// it is not).
func (p *Public) statusOf(m *statev1.Monitor, unknownSince int64) (string, error) {
	switch {
	case !m.GetEnabled():
		return statusPaused, nil
	case unknownSince > 0:
		return statusUnknown, nil
	}
	if m.GetKind() != state.KindPing {
		cs, err := p.state.CheckStatus(m.GetUuid())
		if err != nil {
			return "", err
		}
		switch cs.GetVerdict() {
		case state.ExecSuccess:
			return statusUp, nil
		case state.ExecFailed:
			return statusDown, nil
		}
		return statusNew, nil
	}
	switch state.PingState(m).State {
	case pingstate.Up, pingstate.Running:
		return statusUp, nil
	case pingstate.Late:
		return statusLate, nil
	case pingstate.Down, pingstate.Failed:
		return statusDown, nil
	case pingstate.Paused:
		return statusPaused, nil
	}
	return statusNew, nil
}
