// Package presence keeps track of the edge agents. A Recorder, on every control node, turns the heartbeats of the agents
// connected to that node into RecordAgentSeen commands, at most one per
// agent every MinInterval unless what matters changed. A Watcher, a
// leader-only task, judges each agent region from those records: it
// declares a region offline when none of its agents has been seen for
// OfflineAfter, and back online when an agent is connected again with its
// buffer drained, through SetRegionState (one agent.offline or
// agent.online alert per account with monitors there); and it tells the
// deadline engine which regions' monitors it must not judge meanwhile.
package presence

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/metrics"
)

// DefaultMinInterval is how often a Recorder writes an agent whose
// connection and buffer emptiness did not change.
const DefaultMinInterval = 10 * time.Second

// MaxTracked bounds the agents a Recorder remembers (agent ids are the
// agents' to choose). An agent it cannot remember is written at every
// heartbeat, unthrottled, and counted.
const MaxTracked = 10_000

// Applier proposes commands through raft (*cluster.Node: any node; a
// follower forwards to the leader).
type Applier interface {
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
}

// Seen is what an agent told the control node it is connected to, in a
// heartbeat or when its stream opened or closed.
type Seen struct {
	TokenID, Region, AgentID, Name, Version, Node string
	// Connected is false when the agent's stream closed.
	Connected                                             bool
	BufferedEvents, BufferedResults, OldestBufferedUnixMs int64
	// Members are the agent's region members (not recorded).
	Members []string
}

// RecorderOptions configures a Recorder.
type RecorderOptions struct {
	Cluster Applier
	// MinInterval: an agent is written at most this often unless it
	// connects, disconnects, or its buffer of events or results becomes
	// empty or not empty (default DefaultMinInterval).
	MinInterval time.Duration
	Now         func() time.Time
	Logger      hclog.Logger
	// Metrics gets the agents remembered and the heartbeats written
	// unthrottled (nil: none).
	Metrics *metrics.Agents
	// MaxTracked bounds the agents remembered (default MaxTracked).
	MaxTracked int
}

// Recorder writes agents' heartbeats through raft, throttled. Safe for
// concurrent use.
type Recorder struct {
	o     RecorderOptions
	mu    sync.Mutex
	last  map[string]written
	swept time.Time // the last sweep
}

// written is what the Recorder last wrote of an agent.
type written struct {
	at                         time.Time
	connected, noEvents, noRes bool
	region, name, version, tok string
	node                       string
}

// NewRecorder makes a Recorder.
func NewRecorder(o RecorderOptions) *Recorder {
	if o.MinInterval <= 0 {
		o.MinInterval = DefaultMinInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.MaxTracked <= 0 {
		o.MaxTracked = MaxTracked
	}
	return &Recorder{o: o, last: map[string]written{}}
}

// Seen records s unless the same agent was written less than MinInterval
// ago with the same connection and labels, and its buffers did not just
// become empty (a drained buffer is what brings a region back, so it is
// written at once; a buffer that fills waits for the next write). It returns
// the error of the write, if one was made (the next heartbeat tries
// again).
func (r *Recorder) Seen(ctx context.Context, s Seen) error {
	if s.AgentID == "" || s.Region == "" {
		return fmt.Errorf("presence: agent id and region are required")
	}
	now := r.o.Now()
	w := written{at: now, connected: s.Connected, noEvents: s.BufferedEvents == 0, noRes: s.BufferedResults == 0,
		region: s.Region, name: s.Name, version: s.Version, tok: s.TokenID, node: s.Node}
	r.mu.Lock()
	prev, ok := r.last[s.AgentID]
	if ok && now.Sub(prev.at) < r.o.MinInterval && sameButTime(prev, w) {
		r.mu.Unlock()
		return nil
	}
	r.sweepLocked(now)
	if ok || len(r.last) < r.o.MaxTracked {
		r.last[s.AgentID] = w
	} else {
		r.o.Metrics.Untracked()
	}
	r.o.Metrics.SetTracked(len(r.last))
	r.mu.Unlock()
	_, err := r.o.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_RecordAgentSeen{RecordAgentSeen: &raftv1.RecordAgentSeen{
		AgentId: s.AgentID, TokenId: s.TokenID, Region: s.Region, Name: s.Name, Version: s.Version, Node: s.Node,
		Connected: s.Connected, BufferedEvents: s.BufferedEvents, BufferedResults: s.BufferedResults,
		OldestBufferedUnixMs: s.OldestBufferedUnixMs,
	}}})
	if err != nil {
		r.mu.Lock()
		if cur, ok := r.last[s.AgentID]; ok && cur == w {
			delete(r.last, s.AgentID) // write the next heartbeat
		}
		r.mu.Unlock()
		return fmt.Errorf("presence: recording agent %s: %w", s.AgentID, err)
	}
	return nil
}

// sameButTime tells whether b (now) needs no write after a: only the
// time moved, or a buffer that was empty is no longer.
func sameButTime(a, b written) bool {
	a.at = b.at
	a.noEvents = a.noEvents && b.noEvents
	a.noRes = a.noRes && b.noRes
	return a == b
}

// sweepLocked forgets agents not written for a long time, so the map does
// not grow with agents that moved to other nodes (or were forgotten).
// It runs at most once per MinInterval, and only once the map is large.
func (r *Recorder) sweepLocked(now time.Time) {
	if len(r.last) < min(1024, r.o.MaxTracked) || now.Sub(r.swept) < r.o.MinInterval {
		return
	}
	r.swept = now
	for id, w := range r.last {
		if now.Sub(w.at) > 10*r.o.MinInterval {
			delete(r.last, id)
		}
	}
}
