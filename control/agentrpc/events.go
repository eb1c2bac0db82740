package agentrpc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"lookout/control/state"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// maxReceiptAhead is how far ahead of this node's clock a forwarded
// event's receipt time may be (clock skew between agent and control
// plane).
const maxReceiptAhead = 5 * time.Minute

// ForwardEvents stores a batch of buffered events in order, through the
// Ingest API's batcher, and answers one result per event once they are
// committed: the state machine stores each event_id once per account and
// checks each event's key_id again. A batch over its bounds, or an event
// without event_id, account_id or key_id, is refused whole
// (INVALID_ARGUMENT); an event that breaks the Ingest API's rules is
// answered EVENT_OUTCOME_INVALID with the reason and not proposed. The
// token's region is stamped on every event.
//
// The token bounds what its agents may claim: an event of an account the
// token does not serve is answered EVENT_OUTCOME_UNAUTHORIZED, and one
// whose receipt time lies before the token was made (or the first token
// it was rotated from: state.AgentTokenValidFrom), or more than 5 minutes
// ahead of this node's clock, EVENT_OUTCOME_INVALID; neither is
// proposed, and each is counted (metrics.Agents.Refused).
func (s *Service) ForwardEvents(ctx context.Context, req *connect.Request[agentv1.ForwardEventsRequest]) (*connect.Response[agentv1.ForwardEventsResponse], error) {
	t, _, err := s.authenticate(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	evs := req.Msg.GetEvents()
	if len(evs) > MaxForwardEvents {
		return nil, invalidArg("at most %d events per call, got %d", MaxForwardEvents, len(evs))
	}
	size := 0
	for i, ev := range evs {
		size += proto.Size(ev)
		switch {
		case ev.GetEventId() == "":
			return nil, invalidArg("event %d: event_id is required", i)
		case ev.GetAccountId() == "":
			return nil, invalidArg("event %d: account_id is required", i)
		case ev.GetKeyId() == "":
			return nil, invalidArg("event %d: key_id is required", i)
		}
	}
	if size > MaxForwardBytes {
		return nil, invalidArg("at most %d bytes of events per call, got %d", MaxForwardBytes, size)
	}

	now := s.now()
	results := make([]*raftv1.EventResult, len(evs))
	var pos []int // positions of the events to submit
	refused := 0
	for i, ev := range evs {
		ev.Region = t.GetRegion()
		if r := s.refuseEvent(t, ev, now); r != nil {
			results[i] = r
			refused++
			continue
		}
		if err := s.events.CheckForwarded(ev, now); err != nil {
			results[i] = &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_INVALID, Error: err.Error()}
			continue
		}
		pos = append(pos, i)
	}
	if refused > 0 {
		s.log.Warn("refused events an agent may not forward (another account, or a receipt time before its token or ahead)",
			"token", t.GetId(), "region", t.GetRegion(), "agent", req.Msg.GetAgent().GetId(), "refused", refused)
	}
	// Groups that each fit one batch, submitted one after the other so
	// that the events are applied in the order the agent sent them.
	maxEvents, maxBytes := s.events.MaxGroup()
	for start := 0; start < len(pos); {
		end, bytes := start, 0
		var group []*raftv1.Event
		for end < len(pos) {
			n := groupBytes(evs[pos[end]])
			if len(group) > 0 && (len(group) >= maxEvents || bytes+n > maxBytes) {
				break
			}
			group = append(group, evs[pos[end]])
			bytes += n
			end++
		}
		res, err := s.events.SubmitGroup(ctx, group)
		if err != nil {
			return nil, writeError(ctx, err)
		}
		if len(res) != len(group) {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("%d results for %d events", len(res), len(group)))
		}
		for j, r := range res {
			results[pos[start+j]] = r
		}
		start = end
	}
	return connect.NewResponse(&agentv1.ForwardEventsResponse{Results: results}), nil
}

// refuseEvent returns the result of an event the token's agents may not
// forward (and counts it), or nil.
func (s *Service) refuseEvent(t *statev1.AgentToken, ev *raftv1.Event, now time.Time) *raftv1.EventResult {
	received := ev.GetReceivedUnixMs()
	switch {
	case !state.ServesAccount(t, ev.GetAccountId()):
		s.metrics.Refused("event", "account")
		return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED, Error: "account_id: not an account this agent token serves"}
	case received > 0 && received < state.AgentTokenValidFrom(t):
		s.metrics.Refused("event", "receipt_time")
		return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_INVALID, Error: "received_unix_ms: before the agent token (or the first token it was rotated from) was made"}
	case received > now.Add(maxReceiptAhead).UnixMilli():
		s.metrics.Refused("event", "receipt_time")
		return &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_INVALID, Error: "received_unix_ms: more than 5 minutes in the future"}
	}
	return nil
}

// groupBytes is the size an event takes in a batch (ingest.GroupBytes).
func groupBytes(ev *raftv1.Event) int {
	n := proto.Size(ev)
	return 1 + sizeVarint(uint64(n)) + n
}

func sizeVarint(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// invalidArg is an INVALID_ARGUMENT error.
func invalidArg(format string, a ...any) error {
	return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(format, a...))
}

// writeError classifies an error of a write: the caller's context, or
// else the cluster could not take it now (no leader, shutting down, a
// timeout): UNAVAILABLE, try again; event and execution ids make a retry
// safe.
func writeError(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
		return connect.NewError(connect.CodeDeadlineExceeded, err)
	case ctx.Err() != nil:
		return connect.NewError(connect.CodeCanceled, err)
	}
	return connect.NewError(connect.CodeUnavailable, err)
}
