package agenttest

import (
	"sync"

	"google.golang.org/protobuf/proto"

	"lookout/agent/forward"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Buffer is an in-memory stand-in for the agent's disk buffer, with the
// same contract (ordered, acknowledged up to a sequence number). It keeps
// nothing across a restart: tests of durability use agent/buffer.
type Buffer struct {
	mu      sync.Mutex
	seq     uint64
	events  []forward.EventEntry
	results []forward.ResultEntry
	// Appended is signalled after every append.
	Appended chan struct{}
}

// NewBuffer makes an empty buffer.
func NewBuffer() *Buffer { return &Buffer{Appended: make(chan struct{}, 1)} }

// AppendEvent buffers an event.
func (b *Buffer) AppendEvent(ev *raftv1.Event) error {
	b.mu.Lock()
	b.seq++
	b.events = append(b.events, forward.EventEntry{Seq: b.seq, Event: proto.Clone(ev).(*raftv1.Event)})
	b.mu.Unlock()
	b.signal()
	return nil
}

// AppendResult buffers a verdict.
func (b *Buffer) AppendResult(ex *raftv1.Execution) error {
	b.mu.Lock()
	b.seq++
	b.results = append(b.results, forward.ResultEntry{Seq: b.seq, Execution: proto.Clone(ex).(*raftv1.Execution)})
	b.mu.Unlock()
	b.signal()
	return nil
}

func (b *Buffer) signal() {
	select {
	case b.Appended <- struct{}{}:
	default:
	}
}

// Events returns up to max of the oldest events (maxBytes is ignored).
func (b *Buffer) Events(max, _ int) ([]forward.EventEntry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]forward.EventEntry(nil), b.events[:min(max, len(b.events))]...), nil
}

// AckEvents deletes the events up to seq.
func (b *Buffer) AckEvents(upTo uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.events) > 0 && b.events[0].Seq <= upTo {
		b.events = b.events[1:]
	}
	return nil
}

// Results returns up to max of the oldest verdicts.
func (b *Buffer) Results(max, _ int) ([]forward.ResultEntry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]forward.ResultEntry(nil), b.results[:min(max, len(b.results))]...), nil
}

// AckResults deletes the verdicts up to seq.
func (b *Buffer) AckResults(upTo uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.results) > 0 && b.results[0].Seq <= upTo {
		b.results = b.results[1:]
	}
	return nil
}

// Stats counts what is buffered.
func (b *Buffer) Stats() forward.BufferStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := forward.BufferStats{Events: int64(len(b.events)), Results: int64(len(b.results))}
	if len(b.events) > 0 {
		st.OldestUnixMs = b.events[0].Event.GetReceivedUnixMs()
	}
	return st
}

// ResultsHeld returns a copy of the buffered verdicts.
func (b *Buffer) ResultsHeld() []*raftv1.Execution {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*raftv1.Execution, len(b.results))
	for i, r := range b.results {
		out[i] = r.Execution
	}
	return out
}
