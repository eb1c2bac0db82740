package agentrpc

import (
	"fmt"

	"connectrpc.com/connect"

	"lookout/internal/agentident"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
)

// checkIdentity refuses a malformed agent identity (an empty or garbage
// id, a name or version that is not short UTF-8 text) with
// INVALID_ARGUMENT: a permanent error, on which the agent stops and says
// why, instead of a sighting presence cannot record, answered UNAVAILABLE
// and retried every heartbeat. The calls that record a sighting
// (Assignments, Heartbeat) check it.
func (s *Service) checkIdentity(region string, a *agentv1.AgentIdentity) error {
	if err := agentident.Check(a.GetId(), a.GetName(), a.GetVersion()); err != nil {
		s.log.Warn("refused an agent's malformed identity", "region", region, "error", err)
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("malformed agent identity: %w", err))
	}
	return nil
}

// checkAgentName refuses (INVALID_ARGUMENT) an agent whose name breaks the
// rule of agent names (agentident.CheckName), for the calls that show the
// name without recording a sighting (ReportExecutions labels executions
// with it).
func checkAgentName(a *agentv1.AgentIdentity) error {
	if err := agentident.CheckName(a.GetName()); err != nil {
		return invalidArg("%v", err)
	}
	return nil
}
