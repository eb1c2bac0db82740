package cluster

import (
	"context"
	"fmt"
	"io"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"

	"lookout/cluster/clusterapi"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// StateMachine is the replicated state a node drives (control/state's
// Store): raft's committed entries go in, results and snapshots come out.
// The node reads nothing else of it; the APIs read it directly.
type StateMachine interface {
	// ApplyBatch applies committed entries in order and returns one result
	// per entry (nil for an entry applied before). It must be
	// deterministic.
	ApplyBatch(entries []clusterapi.Entry) []*raftv1.Result
	// AppliedIndex is the raft index of the last entry applied.
	AppliedIndex() uint64
	// WaitApplied returns once AppliedIndex reaches index, or ctx ends.
	WaitApplied(ctx context.Context, index uint64) error
	// Snapshot opens a point-in-time view for raft to persist.
	Snapshot() (clusterapi.Snapshot, error)
	// Restore replaces the whole state with a snapshot's. Reads served
	// meanwhile see the old state or the new one, never an empty or half
	// one; a stream that breaks leaves the old state in use.
	Restore(r io.Reader) error
	// SnapshotAppliedIndex reads the applied index a snapshot holds.
	SnapshotAppliedIndex(r io.Reader) (uint64, error)
	// CommandVersion is the command envelope version the state applies;
	// the node stamps it on every command it proposes.
	CommandVersion() uint32
}

// fsm is the thin glue between raft and the state: it decodes entries and
// hands them to the StateMachine in one call, so a batch of entries is one
// Badger transaction. All rules live in the state machine.
type fsm struct {
	state StateMachine
}

var _ raft.BatchingFSM = (*fsm)(nil)

// Apply applies a single entry.
func (f *fsm) Apply(l *raft.Log) any {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch decodes the command entries of logs and applies them together.
// Configuration entries are raft's own business and get a nil response. An
// entry that cannot be decoded panics: skipping it on one node and not on
// another would make their states differ.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	out := make([]any, len(logs))
	entries := make([]clusterapi.Entry, 0, len(logs))
	pos := make([]int, 0, len(logs))
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		cmd := new(raftv1.Command)
		if err := proto.Unmarshal(l.Data, cmd); err != nil {
			panic(fmt.Sprintf("cluster: raft entry %d is not a command: %v", l.Index, err))
		}
		entries = append(entries, clusterapi.Entry{Index: l.Index, Command: cmd})
		pos = append(pos, i)
	}
	if len(entries) == 0 {
		return out
	}
	for j, res := range f.state.ApplyBatch(entries) {
		out[pos[j]] = res
	}
	return out
}

// Snapshot opens a read view of the state; Persist streams it.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	snap, err := f.state.Snapshot()
	if err != nil {
		return nil, err
	}
	return &fsmSnapshot{snap: snap}, nil
}

// Restore replaces the state with the snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.state.Restore(rc)
}

type fsmSnapshot struct {
	snap clusterapi.Snapshot
}

// Persist writes the view to the sink, cancelling the sink on error.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.snap.WriteTo(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("persist snapshot: %w", err)
	}
	return sink.Close()
}

// Release ends the read view.
func (s *fsmSnapshot) Release() { s.snap.Release() }
