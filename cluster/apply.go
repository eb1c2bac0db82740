package cluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// applyTimeout bounds one raft.Apply on the leader.
const applyTimeout = 10 * time.Second

// Apply makes cmd a raft entry and returns the state machine's result once
// it is committed on a majority and applied. It is the one write path of
// the control plane: on a follower it forwards to the leader; while there
// is no leader (or leadership is moving) it waits up to LeaderWait with
// jitter and then fails with an error wrapping ErrNoLeader. A retried
// command keeps its request id, so it is applied at most once.
func (n *Node) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	cmd = envelope(cmd)
	cmd.Version = n.state.CommandVersion()
	if cmd.RequestId == "" {
		cmd.RequestId = uuid.NewString()
	}
	var res *raftv1.Result
	start := time.Now()
	err := n.withLeader(ctx, func(ctx context.Context) error {
		var err error
		if n.raft.State() == raft.Leader {
			res, err = n.applyLocal(cmd)
			return err
		}
		id := n.leaderID()
		leader, err := n.leaderHTTPAddr()
		if err != nil {
			return err
		}
		fctx, cancel := forwardCtx(ctx, n.leaders, n.leaderID, id)
		defer cancel()
		res, err = n.rpc.apply(fctx, leader, cmd)
		return err
	})
	n.opts.Metrics.Apply(time.Since(start), err)
	return res, err
}

// applyLocal proposes cmd on this node, the leader, stamping the time.
func (n *Node) applyLocal(cmd *raftv1.Command) (*raftv1.Result, error) {
	cmd = envelope(cmd)
	cmd.TimeUnixMs = time.Now().UnixMilli()
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("encode command: %w", err)
	}
	f := n.raft.Apply(data, applyTimeout)
	if err := f.Error(); err != nil {
		return nil, raftError(err)
	}
	res, ok := f.Response().(*raftv1.Result)
	if !ok {
		return nil, fmt.Errorf("state machine gave %T, want a result", f.Response())
	}
	return res, nil
}

// envelope is a shallow copy of cmd: its own envelope fields (version,
// request id, time) to stamp, sharing the operation and any other field's
// message with cmd, which neither copy modifies. A deep copy (proto.Clone)
// of an IngestBatch of hundreds of events was a measurable share of the
// ingest path's allocations.
func envelope(cmd *raftv1.Command) *raftv1.Command {
	src := cmd.ProtoReflect()
	out := new(raftv1.Command)
	dst := out.ProtoReflect()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 {
		dst.SetUnknown(append(protoreflect.RawFields(nil), u...))
	}
	return out
}

// ConsistentRead returns once this node's state reflects every write
// acknowledged before the call: the leader confirms it still leads (after
// its Barrier) and names its applied index; this node waits until it has
// applied that index (ReadIndex). Reads of State after it are consistent.
func (n *Node) ConsistentRead(ctx context.Context) error {
	return n.withLeader(ctx, func(ctx context.Context) error {
		var index uint64
		var err error
		if n.raft.State() == raft.Leader {
			index, err = n.readIndex()
		} else {
			var leader string
			if leader, err = n.leaderHTTPAddr(); err == nil {
				index, err = n.rpc.readIndex(ctx, leader)
			}
		}
		if err != nil {
			return err
		}
		return n.state.WaitApplied(ctx, index)
	})
}

// readIndex is the leader's half of ConsistentRead: every write this
// leader acknowledged is at or below its applied index, and confirming
// leadership afterwards rules out a newer leader having acknowledged more.
func (n *Node) readIndex() (uint64, error) {
	if !n.ready.Load() {
		return 0, fmt.Errorf("%w: leader is not ready yet", ErrNoLeader)
	}
	index := n.state.AppliedIndex()
	if err := n.raft.VerifyLeader().Error(); err != nil {
		return 0, raftError(err)
	}
	return index, nil
}

// leaderID is the id of the leader raft names ("" for none).
func (n *Node) leaderID() raft.ServerID {
	_, id := n.raft.LeaderWithID()
	return id
}

// leaderHTTPAddr is where to forward to. Raft names the leader; its HTTP
// address is what gossip says of it, live or else last known (gossip may
// have lost the leader in a partition raft has already healed from).
func (n *Node) leaderHTTPAddr() (string, error) {
	_, id := n.raft.LeaderWithID()
	if id == "" {
		return "", ErrNoLeader
	}
	m, ok := n.peers.lastKnown(string(id))
	if !ok {
		return "", fmt.Errorf("%w: leader %s is not known to gossip", ErrNoLeader, id)
	}
	return m.HTTPAddr, nil
}

// withLeader runs fn, retrying with jitter while the failure is one that a
// new or settled leader would fix, for up to LeaderWait. A retry goes at
// once when raft names a leader during its pause: a failover costs the
// election, not the election and a pause.
func (n *Node) withLeader(ctx context.Context, fn func(context.Context) error) error {
	deadline := time.Now().Add(n.opts.LeaderWait)
	for {
		named := n.leaders.next()
		err := fn(ctx)
		if err == nil || !retryable(err) {
			return err
		}
		pause := 50*time.Millisecond + rand.N(100*time.Millisecond)
		if time.Now().Add(pause).After(deadline) {
			if errors.Is(err, ErrNoLeader) || errors.Is(err, ErrNotLeader) {
				return fmt.Errorf("%w (waited %s): %v", ErrNoLeader, n.opts.LeaderWait, err)
			}
			return fmt.Errorf("%w (waited %s): %w", ErrNoLeader, n.opts.LeaderWait, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrNoLeader, ctx.Err())
		case <-n.ctx.Done():
			return ErrShutdown
		case <-named:
		case <-time.After(pause):
		}
	}
}

// retryable tells whether err may go away once leadership settles, or
// once an operator restore is done: raft aborts the entries in flight when
// it restores a snapshot (none of them is in the restored state), and the
// command, proposed again with its request id, applies to the restored
// state at most once.
func retryable(err error) bool {
	return errors.Is(err, ErrNoLeader) || errors.Is(err, ErrNotLeader) || errors.Is(err, errForwardFailed) ||
		errors.Is(err, errAbortedByRestore)
}

// raftError maps raft's errors to ours.
func raftError(err error) error {
	switch {
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
		errors.Is(err, raft.ErrLeadershipTransferInProgress):
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	case errors.Is(err, raft.ErrRaftShutdown):
		return ErrShutdown
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return fmt.Errorf("%w: %w", ErrNoLeader, err)
	case errors.Is(err, raft.ErrAbortedByRestore):
		return fmt.Errorf("%w: %w", errAbortedByRestore, err)
	}
	return err
}
