package cluster

import (
	"fmt"
	"io"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// fsm is the thin glue between raft and the state: it decodes entries and
// hands them to state.ApplyBatch in one call, so a batch of entries is one
// Badger transaction. All rules live in control/state.
type fsm struct {
	state *state.Store
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
	entries := make([]state.Entry, 0, len(logs))
	pos := make([]int, 0, len(logs))
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		cmd := new(raftv1.Command)
		if err := proto.Unmarshal(l.Data, cmd); err != nil {
			panic(fmt.Sprintf("cluster: raft entry %d is not a command: %v", l.Index, err))
		}
		entries = append(entries, state.Entry{Index: l.Index, Command: cmd})
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

// Restore wipes the state and loads the snapshot.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.state.Restore(rc)
}

type fsmSnapshot struct {
	snap *state.Snapshot
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
