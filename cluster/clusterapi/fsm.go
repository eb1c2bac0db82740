package clusterapi

import (
	"io"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Entry is one committed raft log entry for the state machine to apply.
type Entry struct {
	Index   uint64
	Command *raftv1.Command
}

// Snapshot is a point-in-time view of the state machine, taken on raft's
// FSM goroutine and written out later, while writers go on.
type Snapshot interface {
	// WriteTo streams the view.
	WriteTo(w io.Writer) (int64, error)
	// Release ends the view.
	Release()
}
