package engine

import (
	"context"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Defaults of the leader's marks of life (control/state/outage.go).
const (
	// DefaultAliveInterval is how often a leader marks itself alive.
	DefaultAliveInterval = 5 * time.Second
	// DefaultOutageAfter is how long after the last mark a term must start
	// for the time between to count as an outage of the whole service: far
	// longer than a failover (a mark's interval plus an election), so a
	// failover loses no deadline.
	DefaultOutageAfter = 30 * time.Second
)

// startTerm proposes the term's first MarkAlive, which records an outage
// if the service was down, before anything is fired, so that the
// deadlines that fell in it are rebased rather than alerted. It retries
// until the mark is applied; false when ctx ended first.
func (d *Deadlines) startTerm(ctx context.Context) bool {
	for {
		err := d.markAlive(ctx, true)
		if err == nil {
			d.logOutage()
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		d.o.Logger.Warn("deadline engine: marking the leader alive failed; retrying", "error", err)
		select {
		case <-ctx.Done():
			return false
		case <-d.o.After(d.o.RetryDelay):
		}
	}
}

// keepAlive marks the leader alive every AliveInterval until ctx ends.
func (d *Deadlines) keepAlive(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.o.After(d.o.AliveInterval):
		}
		if err := d.markAlive(ctx, false); err != nil && ctx.Err() == nil {
			d.o.Logger.Warn("deadline engine: marking the leader alive failed", "error", err)
		}
	}
}

// markAlive proposes one MarkAlive.
func (d *Deadlines) markAlive(ctx context.Context, termStart bool) error {
	res, err := d.o.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_MarkAlive{MarkAlive: &raftv1.MarkAlive{
		TermStart: termStart, OutageAfterMs: d.o.OutageAfter.Milliseconds(),
	}}})
	if err == nil && res.GetStatus() != raftv1.Status_STATUS_OK {
		d.o.Logger.Error("deadline engine: the leader's mark of life was refused", "status", res.GetStatus(), "message", res.GetMessage())
	}
	return err
}

// logOutage says so when the term's start ended an outage.
func (d *Deadlines) logOutage() {
	life, err := d.o.State.ServiceLife()
	if err != nil || len(life.GetOutages()) == 0 {
		return
	}
	o := life.GetOutages()[len(life.GetOutages())-1]
	if o.GetToUnixMs() != life.GetAliveUnixMs() {
		return // an older one
	}
	from, to := time.UnixMilli(o.GetFromUnixMs()).UTC(), time.UnixMilli(o.GetToUnixMs()).UTC()
	d.o.Logger.Warn("the service was down (no leader): ping monitor deadlines that fell in the outage restart from its end",
		"from", from.Format(time.RFC3339), "to", to.Format(time.RFC3339), "for", to.Sub(from).Round(time.Second))
}
