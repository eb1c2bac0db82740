// Package engine holds the leader-only work of the control plane. Timers
// and sweeps run on the leader; what they decide is written through raft,
// so a new leader picks up where the old one stopped.
package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

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
	// AuditMaxAge is how long an audit log entry is kept (default 90
	// days).
	AuditMaxAge time.Duration
	// AlertMaxAge is how long a finished alert (every delivery delivered
	// or given up) is kept after it finished (default 30 days).
	AlertMaxAge time.Duration
	// Interval is the time between sweeps (default 1 minute).
	Interval time.Duration
	// BatchSize bounds the deletions of one raft entry (default 1000, at
	// most state.MaxPruneEvents and state.MaxPruneAlerts).
	BatchSize int64
	// NoteworthyPrune is how many records one sweep must delete for it to
	// be logged at info (default 10,000): less is routine housekeeping,
	// logged at debug.
	NoteworthyPrune int64
	Logger          hclog.Logger
	Now             func() time.Time
}

// Retention is the background clean-up through raft: events older than
// MaxAge, audit log entries older than AuditMaxAge, the expired request
// ids and event ids the state remembers for deduplication, and alerts
// finished longer than AlertMaxAge ago. Run it as a leader task: it stops when its context
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
	if o.AlertMaxAge <= 0 {
		o.AlertMaxAge = 30 * 24 * time.Hour
	}
	if o.AuditMaxAge <= 0 {
		o.AuditMaxAge = 90 * 24 * time.Hour
	}
	if o.BatchSize <= 0 || o.BatchSize > min(state.MaxPruneEvents, state.MaxPruneAlerts) {
		o.BatchSize = 1000
	}
	if o.NoteworthyPrune <= 0 {
		o.NoteworthyPrune = 10_000
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
		if n, err := r.SweepAlerts(ctx); err != nil && ctx.Err() == nil {
			r.o.Logger.Warn("alert retention sweep failed", "deleted", n, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep deletes every event older than MaxAge and audit log entry older
// than AuditMaxAge, and the expired request ids, event ids and ended
// sessions the state remembers, BatchSize per raft entry, and returns how
// many records it deleted.
func (r *Retention) Sweep(ctx context.Context) (int64, error) {
	now := r.o.Now()
	before := now.Add(-r.o.MaxAge).UnixMilli()
	var by raftv1.PruneCounts
	total, err := r.prune(ctx, "prune events", &raftv1.Command{Op: &raftv1.Command_PruneEvents{
		PruneEvents: &raftv1.PruneEvents{BeforeUnixMs: before, Max: r.o.BatchSize, AuditBeforeUnixMs: now.Add(-r.o.AuditMaxAge).UnixMilli()},
	}}, func(res *raftv1.Result) {
		p := res.GetPruned()
		by.Events += p.GetEvents()
		by.EventIds += p.GetEventIds()
		by.RequestIds += p.GetRequestIds()
		by.Sessions += p.GetSessions()
		by.Audit += p.GetAudit()
	})
	r.logPruned("pruned expired records", []pruned{
		{"events", by.GetEvents()}, {"event_ids", by.GetEventIds()}, {"request_ids", by.GetRequestIds()}, {"sessions", by.GetSessions()},
		{"audit_entries", by.GetAudit()},
	}, "events_before", time.UnixMilli(before).UTC())
	return total, err
}

// SweepAlerts deletes every alert that finished more than AlertMaxAge
// ago, BatchSize per raft entry, and returns how many it deleted.
// Alerts with a delivery left are kept, however old.
func (r *Retention) SweepAlerts(ctx context.Context) (int64, error) {
	before := r.o.Now().Add(-r.o.AlertMaxAge).UnixMilli()
	total, err := r.prune(ctx, "prune alerts", &raftv1.Command{Op: &raftv1.Command_PruneAlerts{
		PruneAlerts: &raftv1.PruneAlerts{BeforeUnixMs: before, Max: r.o.BatchSize},
	}}, nil)
	r.logPruned("pruned finished alerts", []pruned{{"alerts", total}}, "finished_before", time.UnixMilli(before).UTC())
	return total, err
}

// pruned is how many records of a kind a sweep deleted.
type pruned struct {
	kind string
	n    int64
}

// logPruned logs what a sweep deleted, each kind that was by its name,
// then kv: nothing when it deleted nothing, at debug when it is routine
// housekeeping (fewer than NoteworthyPrune records), else at info.
func (r *Retention) logPruned(msg string, kinds []pruned, kv ...any) {
	var total int64
	var args []any
	for _, k := range kinds {
		if k.n > 0 {
			total += k.n
			args = append(args, k.kind, k.n)
		}
	}
	if total == 0 {
		return
	}
	args = append(args, kv...)
	if total >= r.o.NoteworthyPrune {
		r.o.Logger.Info(msg, args...)
	} else {
		r.o.Logger.Debug(msg, args...)
	}
}

// prune proposes cmd, whose result says how many records it deleted,
// until an entry deletes fewer than BatchSize, and returns the total;
// seen, when not nil, gets each entry's result.
func (r *Retention) prune(ctx context.Context, what string, cmd *raftv1.Command, seen func(*raftv1.Result)) (int64, error) {
	var total int64
	for ctx.Err() == nil {
		res, err := r.o.Cluster.Apply(ctx, proto.Clone(cmd).(*raftv1.Command))
		if err != nil {
			return total, err
		}
		if res.GetStatus() != raftv1.Status_STATUS_OK {
			return total, fmt.Errorf("%s: %v: %s", what, res.GetStatus(), res.GetMessage())
		}
		if seen != nil {
			seen(res)
		}
		n := res.GetDeleted()
		total += n
		if n < r.o.BatchSize {
			break
		}
	}
	return total, ctx.Err()
}
