// Package engine holds the leader-only work of the control plane. Timers
// and sweeps run on the leader; what they decide is written through raft,
// so a new leader picks up where the old one stopped.
package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Applier proposes a command through raft.
type Applier interface {
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
}

// RetentionOptions configures the event-age sweeper.
type RetentionOptions struct {
	Cluster Applier
	// MaxAge is how long events are kept (default 90 days).
	MaxAge time.Duration
	// Interval is the time between sweeps (default 1 minute).
	Interval time.Duration
	// BatchSize bounds the deletions of one raft entry (default 1000, at
	// most state.MaxPruneEvents).
	BatchSize int64
	Logger    hclog.Logger
	Now       func() time.Time
}

// Retention is the background clean-up through raft: events older than
// MaxAge, and the expired request ids and event ids the state remembers
// for deduplication. Run it as a leader task: it stops when its context
// ends.
type Retention struct {
	o RetentionOptions
}

// NewRetention makes the sweeper.
func NewRetention(o RetentionOptions) *Retention {
	if o.MaxAge <= 0 {
		o.MaxAge = 90 * 24 * time.Hour
	}
	if o.Interval <= 0 {
		o.Interval = time.Minute
	}
	if o.BatchSize <= 0 || o.BatchSize > state.MaxPruneEvents {
		o.BatchSize = 1000
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Retention{o: o}
}

// Run sweeps every Interval until ctx ends.
func (r *Retention) Run(ctx context.Context) {
	t := time.NewTicker(r.o.Interval)
	defer t.Stop()
	for {
		if n, err := r.Sweep(ctx); err != nil && ctx.Err() == nil {
			r.o.Logger.Warn("event retention sweep failed", "deleted", n, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep deletes every event older than MaxAge, BatchSize per raft entry,
// and returns how many it deleted.
func (r *Retention) Sweep(ctx context.Context) (int64, error) {
	before := r.o.Now().Add(-r.o.MaxAge).UnixMilli()
	var total int64
	for ctx.Err() == nil {
		res, err := r.o.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_PruneEvents{
			PruneEvents: &raftv1.PruneEvents{BeforeUnixMs: before, Max: r.o.BatchSize},
		}})
		if err != nil {
			return total, err
		}
		if res.GetStatus() != raftv1.Status_STATUS_OK {
			return total, fmt.Errorf("prune events: %v: %s", res.GetStatus(), res.GetMessage())
		}
		n := res.GetDeleted()
		total += n
		if n < r.o.BatchSize {
			break
		}
	}
	if total > 0 {
		r.o.Logger.Info("pruned old events", "deleted", total, "before", time.UnixMilli(before).UTC())
	}
	return total, ctx.Err()
}
