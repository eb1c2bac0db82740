package agentrpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"

	"lookout/control/state"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// maxSlotAhead is how far ahead of this node's clock an execution's slot
// may be (clock skew between agent and control plane).
const maxSlotAhead = 5 * time.Minute

// ReportExecutions records final verdicts of the token's region, stamped
// with the region and the agent's name and id, through RecordExecutions
// (keyed by check, region and slot: a repeat is stored once). An
// execution whose check is gone, disabled, not of the region or of an
// account the token does not serve (counted: metrics.Agents.Refused),
// whose status is not final, or whose slot is more than 5 minutes ahead
// of this node's clock, is refused with the reason in its result (not sent
// again). A check this node does not know, or knows otherwise, is looked
// up again after a consistent read before it is refused.
func (s *Service) ReportExecutions(ctx context.Context, req *connect.Request[agentv1.ReportExecutionsRequest]) (*connect.Response[agentv1.ReportExecutionsResponse], error) {
	t, _, err := s.authenticate(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	if err := checkAgentName(req.Msg.GetAgent()); err != nil {
		return nil, err
	}
	execs := req.Msg.GetExecutions()
	if len(execs) > MaxReportExecutions {
		return nil, invalidArg("at most %d executions per call, got %d", MaxReportExecutions, len(execs))
	}
	region := t.GetRegion()
	agent, agentID := cutLabel(req.Msg.GetAgent().GetName()), cutLabel(req.Msg.GetAgent().GetId())
	results := make([]*agentv1.ExecutionResult, len(execs))
	var pos []int
	caughtUp := false
	for i, e := range execs {
		if !state.FinalStatus(e.GetStatus()) {
			results[i] = &agentv1.ExecutionResult{Error: fmt.Sprintf("status %q is not final: report success or failed", e.GetStatus())}
			continue
		}
		why, err := s.refusal(t, e)
		if err == nil && why != "" && why != notServed && !caughtUp {
			// A check just created (or moved into the region) may not be
			// applied here yet.
			if err := s.catchUp.Wait(ctx); err != nil {
				return nil, connect.NewError(connect.CodeUnavailable, err)
			}
			caughtUp = true
			why, err = s.refusal(t, e)
		}
		if err != nil {
			s.log.Error("read check", "check", e.GetCheckUuid(), "error", err)
			return nil, connect.NewError(connect.CodeUnavailable, errors.New("cannot read the state"))
		}
		if why == notServed {
			s.metrics.Refused("execution", "account")
			s.log.Warn("an agent reported a check of an account its token does not serve", "token", t.GetId(), "region", region, "check", e.GetCheckUuid())
		}
		if why != "" {
			results[i] = &agentv1.ExecutionResult{Error: why}
			continue
		}
		e.Region, e.Agent, e.AgentId = region, agent, agentID
		state.BoundExecution(e)
		pos = append(pos, i)
	}
	for start := 0; start < len(pos); start += state.MaxExecutionsPerCommand {
		chunk := pos[start:min(start+state.MaxExecutionsPerCommand, len(pos))]
		cmd := &raftv1.RecordExecutions{RetentionCount: s.retention}
		for _, i := range chunk {
			cmd.Executions = append(cmd.Executions, execs[i])
		}
		res, err := s.writer.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: cmd}})
		if err != nil {
			return nil, writeError(ctx, err)
		}
		for _, i := range chunk {
			if res.GetStatus() == raftv1.Status_STATUS_OK {
				results[i] = &agentv1.ExecutionResult{Stored: true}
			} else {
				results[i] = &agentv1.ExecutionResult{Error: res.GetMessage()}
			}
		}
	}
	return connect.NewResponse(&agentv1.ReportExecutionsResponse{Results: results}), nil
}

// notServed is the refusal of an execution of a check of an account the
// agent's token does not serve.
const notServed = "check of an account this agent token does not serve"

// refusal says why the final execution e cannot be recorded for the
// agents of token t, or "" when it can.
func (s *Service) refusal(t *statev1.AgentToken, e *raftv1.Execution) (string, error) {
	switch {
	case e.GetSlotUnixMs() <= 0:
		return "slot_unix_ms must be positive", nil
	case e.GetSlotUnixMs() > s.now().Add(maxSlotAhead).UnixMilli():
		// A slot far ahead would be the check's newest for good and hide
		// every later verdict.
		return "slot_unix_ms is more than 5 minutes in the future", nil
	}
	m, err := s.state.MonitorByUUID(e.GetCheckUuid())
	if errors.Is(err, state.ErrNotFound) || (err == nil && (m.GetAccountId() != e.GetAccountId() || m.GetKind() == state.KindPing)) {
		return "check not found", nil
	}
	if err != nil {
		return "", err
	}
	if !state.ServesAccount(t, m.GetAccountId()) {
		return notServed, nil
	}
	return checkRefusal(t.GetRegion(), m), nil
}

// checkRefusal says why region's agents may not report m, or "".
func checkRefusal(region string, m *statev1.Monitor) string {
	switch {
	case !m.GetEnabled():
		return "check is disabled"
	case !slices.Contains(m.GetRegions(), region):
		return fmt.Sprintf("check does not run in region %s", region)
	}
	return ""
}

// cutLabel cuts an agent name to what an execution holds.
func cutLabel(s string) string {
	if len(s) > state.MaxExecutionLabel {
		return strings.ToValidUTF8(s[:state.MaxExecutionLabel], "")
	}
	return s
}
