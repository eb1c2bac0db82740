package agentrpc

import (
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/names"
)

// checkAgentName refuses (INVALID_ARGUMENT) an agent whose name breaks the
// rule of every name people see (internal/names): the panel, GET
// /admin/v1/agents and executions show it. The agent checks its --name at
// start, so only an agent built otherwise meets this. No name is allowed.
func checkAgentName(a *agentv1.AgentIdentity) error {
	if name := a.GetName(); name != "" {
		if err := names.Check(name); err != nil {
			return invalidArg("agent name %v", err)
		}
	}
	return nil
}
