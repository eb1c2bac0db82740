package presence

import (
	"context"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// forgetAgents removes the records of the agents unseen for ForgetAfter,
// state.MaxForgetAgents a command. The state machine judges each record
// again at the command's time: an agent seen since stays.
func (w *Watcher) forgetAgents(ctx context.Context, ids []string) {
	for len(ids) > 0 && ctx.Err() == nil {
		n := min(len(ids), state.MaxForgetAgents)
		res, err := w.o.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_ForgetAgents{ForgetAgents: &raftv1.ForgetAgents{
			AgentIds: ids[:n], UnseenForMs: w.o.ForgetAfter.Milliseconds(),
		}}})
		switch {
		case err != nil:
			w.o.Logger.Warn("forgetting agents failed; retrying", "error", err)
			return
		case res.GetStatus() != raftv1.Status_STATUS_OK:
			w.o.Logger.Error("forgetting agents was refused", "status", res.GetStatus(), "message", res.GetMessage())
			return
		}
		if res.GetDeleted() > 0 {
			w.o.Logger.Info("forgot agents not seen for a long time", "agents", res.GetDeleted(), "unseen_for", w.o.ForgetAfter.Round(time.Second))
		}
		ids = ids[n:]
	}
}

// forgetRegion forgets a region none of whose agents is left (the
// operator forgot them, or ForgetAfter did): its accounts' marks, then its
// verdict, so that it raises no alert and holds no monitor.
func (w *Watcher) forgetRegion(ctx context.Context, name string) {
	for ctx.Err() == nil {
		res, err := w.o.Cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_ForgetAgents{ForgetAgents: &raftv1.ForgetAgents{Region: name}}})
		switch {
		case err != nil:
			w.o.Logger.Warn("forgetting an agent region failed; retrying", "region", name, "error", err)
			return
		case res.GetStatus() != raftv1.Status_STATUS_OK:
			w.o.Logger.Error("forgetting an agent region was refused", "region", name, "status", res.GetStatus(), "message", res.GetMessage())
			return
		case res.GetStale():
			return // an agent of the region reported meanwhile
		case res.GetDeleted() < state.MaxForgetMarks:
			w.o.Logger.Info("agent region forgotten: no agent of it is left", "region", name)
			return
		}
	}
}
