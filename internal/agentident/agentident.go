// Package agentident holds the rules of an edge agent's identity (its id,
// --name and version), shared by the agent, which checks its own before it
// starts, and the control plane, which refuses a malformed one with
// INVALID_ARGUMENT: a permanent error the agent stops on, instead of a
// sighting it cannot record and the agent retries for ever.
package agentident

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"lookout/internal/names"
)

// Bounds of an identity.
const (
	// MaxID bounds an agent id (the agent makes "ag_" and 32 hex digits).
	MaxID = 64
	// MaxName bounds --name (checkrun.MaxLabel: it labels executions).
	MaxName = 64
	// MaxVersion bounds a build version.
	MaxVersion = 64
)

// CheckID checks an agent id: 1 to MaxID characters of A-Z, a-z, 0-9,
// '.', '_' and '-'.
func CheckID(id string) error {
	if id == "" {
		return fmt.Errorf("agent id is empty")
	}
	if len(id) > MaxID {
		return fmt.Errorf("agent id is %d bytes long, at most %d", len(id), MaxID)
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("agent id %q holds a character other than A-Z, a-z, 0-9, '.', '_' and '-'", id)
		}
	}
	return nil
}

// CheckName checks an agent name: empty (the agent then shows its id), or
// at most MaxName bytes that follow the rule of every name people see
// (internal/names): the panel, GET /admin/v1/agents and executions show it.
func CheckName(name string) error {
	if err := checkText("agent name", name, MaxName); err != nil || name == "" {
		return err
	}
	if err := names.Check(name); err != nil {
		return fmt.Errorf("agent name %+q %v", name, err)
	}
	return nil
}

// Check checks a whole identity.
func Check(id, name, version string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if err := CheckName(name); err != nil {
		return err
	}
	return checkText("agent version", version, MaxVersion)
}

func checkText(what, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes long, at most %d", what, len(s), max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not UTF-8", what, s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q holds a control character", what, s)
		}
	}
	return nil
}
