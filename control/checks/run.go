package checks

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	"lookout/control/state"
	"lookout/internal/checkrun"
	"lookout/internal/fairshare"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/probe"
)

// finalTries bounds the proposals of a verdict (each waits up to the
// cluster's own timeout for a leader).
const finalTries = 5

// proposeRetry is the wait between two proposals of a verdict.
const proposeRetry = 250 * time.Millisecond

// Target is the probe target of check m (its stored config).
func Target(m *statev1.Monitor) probe.Target {
	return checkrun.Target(m.GetConfig())
}

// execute runs the execution of j on worker w: unless its slot already
// has a verdict (an earlier leader's) or passed more than MaxLate ago, it
// records it as running, makes up to 1+len(RetryDelays) attempts (a
// transient failure is recorded as retrying and tried again after the
// next delay, waiting without a worker), and records the verdict. The
// pending status (waiting for a worker or the account's share) is not
// recorded: it lives on the leader only.
func (s *Scheduler) execute(ctx context.Context, w *fairshare.Worker, j job) {
	id, slotMs := j.m.GetUuid(), j.slot.UnixMilli()
	prev, err := s.o.State.Execution(id, state.RegionControl, slotMs)
	switch {
	case err == nil && state.FinalStatus(prev.GetStatus()):
		s.skipped.Add(1) // decided by an earlier leader
		return
	case err != nil && !errors.Is(err, state.ErrNotFound):
		s.o.Logger.Warn("check scheduler: reading an execution failed", "check", id, "error", err)
	case err != nil && s.o.Now().Sub(j.slot) > s.o.MaxLate:
		s.skipped.Add(1) // waited for a worker or its account's share past MaxLate: not run late
		return
	}
	p := s.o.Probers[j.m.GetKind()]
	if p == nil {
		return
	}
	target := Target(j.m)
	s.runs.Add(1)
	started := s.o.Now()
	if s.o.OnStart != nil {
		s.o.OnStart(j.slot, started)
	}
	ex := &raftv1.Execution{
		AccountId: j.m.GetAccountId(), CheckUuid: id, Region: state.RegionControl, SlotUnixMs: slotMs,
		Status: state.ExecRunning, Attempts: 1, StartedUnixMs: started.UnixMilli(),
	}
	if !s.record(ctx, 1, ex) {
		return // not leading any more: the next leader decides the slot
	}
	pctx := context.WithValue(ctx, slotKey{}, j.slot)
	for attempt := 1; ; attempt++ {
		res := p.Probe(pctx, target)
		if ctx.Err() != nil {
			return
		}
		checkrun.Fill(ex, res, attempt)
		if res.OK() {
			ex.Status = state.ExecSuccess
			break
		}
		if !res.Transient() || attempt > len(s.o.RetryDelays) {
			ex.Status = state.ExecFailed
			break
		}
		ex.Status = state.ExecRetrying
		s.record(ctx, 1, ex)
		if !w.Wait(s.o.After(s.o.RetryDelays[attempt-1])) {
			return // leadership lost
		}
	}
	ex.FinishedUnixMs = s.o.Now().UnixMilli()
	if s.record(ctx, finalTries, ex) {
		s.o.Metrics.Run(ex.GetStatus())
	}
}

// record proposes execs (at most state.MaxExecutionsPerCommand) in one
// entry, trying up to tries times; it reports whether they were recorded.
func (s *Scheduler) record(ctx context.Context, tries int, execs ...*raftv1.Execution) bool {
	rec := &raftv1.RecordExecutions{RetentionCount: s.o.RetentionCount}
	for _, ex := range execs {
		state.BoundExecution(ex)
		rec.Executions = append(rec.Executions, proto.Clone(ex).(*raftv1.Execution))
	}
	ex := execs[0] // for the logs
	cmd := &raftv1.Command{Op: &raftv1.Command_RecordExecutions{RecordExecutions: rec}}
	for try := 1; ; try++ {
		res, err := s.o.Cluster.Apply(ctx, cmd)
		switch {
		case err == nil && res.GetStatus() == raftv1.Status_STATUS_OK:
			return true
		case err == nil:
			s.errs.Add(1)
			s.o.Logger.Error("check scheduler: an execution was refused", "check", ex.GetCheckUuid(), "status", res.GetStatus(), "message", res.GetMessage())
			return false
		case ctx.Err() != nil:
			return false
		}
		s.errs.Add(1)
		if try >= tries {
			s.o.Logger.Warn("check scheduler: recording an execution failed", "check", ex.GetCheckUuid(), "status", ex.GetStatus(), "error", err)
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.o.After(proposeRetry):
		}
	}
}
