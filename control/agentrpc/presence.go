package agentrpc

import (
	"context"

	"connectrpc.com/connect"

	agentv1 "lookout/internal/gen/lookout/agent/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Presence is told what this node sees of agents: every heartbeat, and
// every Assignments stream that opens or closes. It is where agent
// presence (GET /admin/v1/agents, offline alerting) is kept; this package
// only reports.
type Presence interface {
	// Seen reports one sighting. It should return quickly: heartbeats wait
	// for it. Its error is logged (and fails the Heartbeat with
	// UNAVAILABLE, so the agent tries again).
	Seen(ctx context.Context, s Seen) error
}

// Seen is one sighting of an agent by this node.
type Seen struct {
	// TokenID and Region are of the agent's token.
	TokenID, Region string
	// AgentID, Name and Version are what the agent says of itself
	// (AgentIdentity).
	AgentID, Name, Version string
	// Heartbeat is set for a Heartbeat call; BufferedEvents,
	// BufferedResults, OldestBufferedUnixMs and Members are then the
	// agent's report.
	Heartbeat bool
	// Connected tells whether the agent holds an Assignments stream to
	// Node: true when one opens, false when it closes. A heartbeat says
	// true (the agent reached the node).
	Connected            bool
	BufferedEvents       int64
	BufferedResults      int64
	OldestBufferedUnixMs int64
	Members              []string
	// Node is the id of the control node that saw the agent.
	Node string
	// UnixMs is the node's clock at the sighting.
	UnixMs int64
}

// NopPresence ignores every sighting (tests that do not look at presence).
type NopPresence struct{}

// Seen does nothing.
func (NopPresence) Seen(context.Context, Seen) error { return nil }

// seen fills a Seen from the token and the agent's identity.
func (s *Service) seen(t *statev1.AgentToken, a *agentv1.AgentIdentity) Seen {
	return Seen{
		TokenID: t.GetId(), Region: t.GetRegion(),
		AgentID: a.GetId(), Name: a.GetName(), Version: a.GetVersion(),
		Node: s.node, UnixMs: s.now().UnixMilli(),
	}
}

// Heartbeat reports that the agent is alive and how much it buffers.
func (s *Service) Heartbeat(ctx context.Context, req *connect.Request[agentv1.HeartbeatRequest]) (*connect.Response[agentv1.HeartbeatResponse], error) {
	t, _, err := s.authenticate(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	m := req.Msg
	if err := s.checkIdentity(t.GetRegion(), m.GetAgent()); err != nil {
		return nil, err
	}
	seen := s.seen(t, m.GetAgent())
	seen.Heartbeat, seen.Connected = true, true
	seen.BufferedEvents, seen.BufferedResults = m.GetBufferedEvents(), m.GetBufferedResults()
	seen.OldestBufferedUnixMs, seen.Members = m.GetOldestBufferedUnixMs(), m.GetMembers()
	if err := s.presence.Seen(ctx, seen); err != nil {
		s.log.Warn("record agent heartbeat", "region", t.GetRegion(), "agent", m.GetAgent().GetId(), "error", err)
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	return connect.NewResponse(&agentv1.HeartbeatResponse{ServerUnixMs: s.now().UnixMilli()}), nil
}
