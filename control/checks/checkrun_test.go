package checks

import (
	"testing"

	"lookout/control/state"
	"lookout/internal/checkrun"
)

// TestCheckrunMatchesState: what agents and this scheduler share in
// internal/checkrun agrees with the state machine's rules.
func TestCheckrunMatchesState(t *testing.T) {
	pairs := []struct {
		name       string
		got, state any
	}{
		{"MaxError", checkrun.MaxError, state.MaxExecutionError},
		{"MaxText", checkrun.MaxText, state.MaxExecutionText},
		{"MaxDNSNames", checkrun.MaxDNSNames, state.MaxExecutionDNSNames},
		{"MaxDNSName", checkrun.MaxDNSName, state.MaxExecutionDNSName},
		{"MaxLabel", checkrun.MaxLabel, state.MaxExecutionLabel},
		{"StatusRunning", checkrun.StatusRunning, state.ExecRunning},
		{"StatusRetrying", checkrun.StatusRetrying, state.ExecRetrying},
		{"StatusSuccess", checkrun.StatusSuccess, state.ExecSuccess},
		{"StatusFailed", checkrun.StatusFailed, state.ExecFailed},
		{"KindHTTPCheck", checkrun.KindHTTPCheck, state.KindHTTPCheck},
		{"KindSSLCheck", checkrun.KindSSLCheck, state.KindSSLCheck},
	}
	for _, p := range pairs {
		if p.got != p.state {
			t.Errorf("checkrun.%s = %v, control/state has %v", p.name, p.got, p.state)
		}
	}
}
