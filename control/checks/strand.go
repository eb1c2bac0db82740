package checks

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/schedule"
)

// latestSlot returns the latest slot of check id's schedule at or before
// now, if it is at most maxLate old: the slot a new leader runs at once
// unless it already has a verdict (the former leader died while it was
// due). Interval and cron schedules alike.
func latestSlot(sc schedule.Schedule, id string, now time.Time, maxLate time.Duration) (time.Time, bool) {
	if iv, ok := sc.Interval(); ok {
		prev := sc.NextFor(id, now).Add(-iv)
		return prev, now.Sub(prev) <= maxLate
	}
	var last time.Time
	for s := sc.NextFor(id, now.Add(-maxLate-time.Nanosecond)); !s.IsZero() && !s.After(now); s = sc.NextFor(id, s) {
		last = s
	}
	return last, !last.IsZero()
}

// stranded returns check id's execution an earlier runner left running or
// retrying (a leader that died or lost leadership in the middle, or whose
// verdict could not be recorded), or nil. Executions of one check run one
// at a time and every term closes the strands it finds before running
// anything of the check, so a strand is always the check's newest
// execution.
func (t *term) stranded(id string) *raftv1.Execution {
	cs, err := t.s.o.State.CheckStatus(id)
	if err != nil || cs.GetLastStatus() == "" || state.FinalStatus(cs.GetLastStatus()) {
		return nil
	}
	ex, err := t.s.o.State.Execution(id, state.RegionControl, cs.GetLastSlotUnixMs())
	switch {
	case errors.Is(err, state.ErrNotFound):
		return nil // an agent's (checks with regions)
	case err != nil:
		t.s.o.Logger.Warn("check scheduler: reading an execution failed", "check", id, "error", err)
		return nil
	case state.FinalStatus(ex.GetStatus()):
		return nil
	}
	return ex
}

// settle queues the stranded execution ex (if any) to be closed: its slot
// will not run again.
func (t *term) settle(ex *raftv1.Execution) {
	if ex != nil {
		t.closing = append(t.closing, ex)
	}
}

// closeStranded records the queued stranded executions as failed with
// error_kind interrupted, so none stays running forever. The state machine
// takes an interrupted execution as no verdict (state.Interrupted): it
// raises no alert and leaves the check up or down as it was, because the
// target was not judged.
func (t *term) closeStranded(ctx context.Context) {
	now := t.s.o.Now().UnixMilli()
	for len(t.closing) > 0 && ctx.Err() == nil {
		batch := t.closing[:min(len(t.closing), state.MaxExecutionsPerCommand)]
		t.closing = t.closing[len(batch):]
		for i, prev := range batch {
			batch[i] = interrupted(prev, now)
		}
		if t.s.record(ctx, finalTries, batch...) {
			t.s.interrupted.Add(uint64(len(batch)))
			t.s.o.Logger.Info("check scheduler: closed executions an earlier runner left unfinished", "count", len(batch))
		}
	}
	t.closing = nil
}

// interrupted is the closing record of the stranded execution prev.
func interrupted(prev *raftv1.Execution, nowMs int64) *raftv1.Execution {
	ex := proto.Clone(prev).(*raftv1.Execution)
	msg := "interrupted: the runner stopped before a verdict (a leader change); the target was not judged"
	if prev.GetError() != "" {
		msg += "; the last attempt: " + prev.GetError()
	}
	ex.Status, ex.Error, ex.ErrorKind, ex.FinishedUnixMs = state.ExecFailed, msg, state.ErrorInterrupted, nowMs
	return ex
}

// slotKey is the context key of SlotOf.
type slotKey struct{}

// SlotOf returns the slot of the execution whose attempt a probe makes,
// from the context the scheduler gives Prober.Probe (a prober may tag its
// requests or logs with it).
func SlotOf(ctx context.Context) (time.Time, bool) {
	slot, ok := ctx.Value(slotKey{}).(time.Time)
	return slot, ok
}
