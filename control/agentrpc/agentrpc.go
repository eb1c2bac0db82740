// Package agentrpc serves the agent RPC (proto/lookout/agent/v1) on every
// control node: the Assignments stream that tells the agents of a region
// which checks to run and which ingest keys to accept, and the unary calls
// through which they report check executions, forward buffered events and
// say they are alive.
//
// Every call is authenticated by an agent token (Authorization: Bearer
// at_...), looked up by its hash in this node's state; a token this node
// does not hold is looked up again after a consistent read (a token just
// created on the leader). The token's region is stamped on everything the
// agent sends. A token that names accounts scopes its agents to them: the
// stream carries only those accounts' checks and ingest keys, and every
// event or execution an agent sends for another account is refused and
// counted (metrics.Agents.Refused). The stream also hands the agents the
// region's gossip key (Options.GossipKey), so that only holders of a
// token of the region can join its pool. Reads are local (a follower
// serves the stream from its own state); writes go through raft (Writer),
// events through the Ingest API's batcher (Events), so an agent's events
// take the same path as pings.
package agentrpc

import (
	"context"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/go-hclog"
	"golang.org/x/sync/singleflight"

	"lookout/control/keyauth"
	"lookout/control/state"
	"lookout/internal/gen/lookout/agent/v1/agentv1connect"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/metrics"
)

// State is what the agent RPC reads of this node's copy of the replicated
// state (*state.Store).
type State interface {
	// AgentTokenByHash returns the agent token whose secret hashes to
	// hash, or an error wrapping state.ErrNotFound.
	AgentTokenByHash(hash []byte) (*statev1.AgentToken, error)
	// AgentAssignments reads what the agents of a token of region that
	// serves accounts (empty: every account) are assigned.
	AgentAssignments(region string, accounts []string) (*state.Assignments, error)
	// AssignmentsChanged is closed once assignments may have changed.
	AssignmentsChanged() <-chan struct{}
	// MonitorByUUID returns a monitor of any account, or an error
	// wrapping state.ErrNotFound.
	MonitorByUUID(id string) (*statev1.Monitor, error)
}

// Writer is what the agent RPC needs of the raft cluster.
type Writer interface {
	// Apply proposes cmd (forwarded to the leader if need be) and returns
	// the state machine's result once it is committed and applied.
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
	// ConsistentRead returns once the local state reflects every write
	// acknowledged before the call.
	ConsistentRead(ctx context.Context) error
}

// Events is the Ingest API's way into raft (control/ingest.API): the same
// rules and the same group commit as pings.
type Events interface {
	// CheckForwarded checks a forwarded event against the Ingest API's
	// rules as of now (and cuts its message).
	CheckForwarded(ev *raftv1.Event, now time.Time) error
	// SubmitGroup stores events together and in order, and returns one
	// result per event once they are committed and applied.
	SubmitGroup(ctx context.Context, evs []*raftv1.Event) ([]*raftv1.EventResult, error)
	// MaxGroup bounds one SubmitGroup (events, and bytes as
	// ingest.GroupBytes counts them).
	MaxGroup() (events, bytes int)
}

// Bounds of the calls.
const (
	// MaxForwardEvents is the most events of one ForwardEvents.
	MaxForwardEvents = 1000
	// MaxForwardBytes is the most bytes of the events of one
	// ForwardEvents (encoded).
	MaxForwardBytes = 4 << 20
	// MaxReportExecutions is the most executions of one ReportExecutions.
	MaxReportExecutions = 256
	// maxReadBytes caps any request message (Connect answers
	// RESOURCE_EXHAUSTED beyond it); the bounds above are checked inside.
	maxReadBytes = 8 << 20
)

// Timing of the Assignments stream.
const (
	// DefaultRecheck is how often a stream checks that its token still
	// holds (a revoked agent is cut within it plus the revocation's
	// replication).
	DefaultRecheck = time.Second
	// DefaultKeepalive is how often an idle stream sends an empty message
	// (the contract says at least every 15 s).
	DefaultKeepalive = 10 * time.Second
	// DefaultCoalesce is how long a stream waits after a change for more
	// before it reads the state again.
	DefaultCoalesce = 50 * time.Millisecond
)

// Options configures the agent RPC.
type Options struct {
	// State is this node's state.
	State State
	// Writer applies commands and confirms reads.
	Writer Writer
	// Events stores forwarded events.
	Events Events
	// Presence is told of heartbeats and of streams that open and close
	// (nil: nobody).
	Presence Presence
	// NodeID names this node in what Presence is told.
	NodeID string
	// GossipKey returns the gossip key of a region's agents (32 bytes),
	// the same on every control node (cluster.RegionGossipKey). Nil: no
	// key is handed out, and agents cannot gossip (tests).
	GossipKey func(region string) []byte
	// Metrics counts the events and executions refused for their account
	// or receipt time (nil: none).
	Metrics *metrics.Agents
	// ExecutionRetention is how many executions are kept per check,
	// stamped into RecordExecutions (0: state.DefaultExecutionRetention).
	ExecutionRetention int64
	// Recheck, Keepalive and Coalesce tune the Assignments stream (0: the
	// defaults).
	Recheck, Keepalive, Coalesce time.Duration
	// TokenCheckTimeout bounds the consistent read after a miss (0:
	// keyauth.DefaultCheckTimeout).
	TokenCheckTimeout time.Duration
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
}

// Service implements agentv1connect.AgentServiceHandler.
type Service struct {
	agentv1connect.UnimplementedAgentServiceHandler

	state     State
	writer    Writer
	events    Events
	presence  Presence
	node      string
	gossipKey func(region string) []byte
	metrics   *metrics.Agents
	retention int64
	recheck   time.Duration
	keepalive time.Duration
	coalesce  time.Duration
	catchUp   *keyauth.CatchUp
	log       hclog.Logger
	now       func() time.Time

	mu     sync.Mutex
	views  map[string]cachedView // by scope (viewScope); shared by its streams (read-only)
	flight singleflight.Group    // readings of a scope under way

	stop     chan struct{} // closed by Stop: streams end
	stopOnce sync.Once
}

// Stop ends every open assignment stream UNAVAILABLE (its agent goes to
// another node), so that a node shutting down does not wait for them.
func (s *Service) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// stopping tells whether Stop was called.
func (s *Service) stopping() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// New returns the agent RPC service.
func New(o Options) *Service {
	s := &Service{
		state: o.State, writer: o.Writer, events: o.Events, presence: o.Presence,
		node: o.NodeID, gossipKey: o.GossipKey, metrics: o.Metrics, retention: o.ExecutionRetention,
		recheck: o.Recheck, keepalive: o.Keepalive, coalesce: o.Coalesce,
		catchUp: keyauth.NewCatchUp(o.Writer, o.TokenCheckTimeout),
		log:     o.Logger, now: o.Now,
		views: map[string]cachedView{},
		stop:  make(chan struct{}),
	}
	if s.presence == nil {
		s.presence = NopPresence{}
	}
	if s.retention <= 0 {
		s.retention = state.DefaultExecutionRetention
	}
	if s.recheck <= 0 {
		s.recheck = DefaultRecheck
	}
	if s.keepalive <= 0 {
		s.keepalive = DefaultKeepalive
	}
	if s.coalesce <= 0 {
		s.coalesce = DefaultCoalesce
	}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Handler returns the Connect path prefix of the service
// (/lookout.agent.v1.AgentService/) and its handler, to mount on the
// node's one mux.
func (s *Service) Handler() (string, http.Handler) {
	return agentv1connect.NewAgentServiceHandler(s, connect.WithReadMaxBytes(maxReadBytes))
}
