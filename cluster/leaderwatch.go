package cluster

import "sync"

// leaderWatch tells waiters that raft named a new leader, so that a write
// held while there was none is forwarded as soon as there is one instead
// of at its next retry.
type leaderWatch struct {
	mu sync.Mutex
	ch chan struct{} // closed and replaced at each new leader
}

func newLeaderWatch() *leaderWatch { return &leaderWatch{ch: make(chan struct{})} }

// next is closed when the next leader is named.
func (w *leaderWatch) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ch
}

// named wakes the waiters of next.
func (w *leaderWatch) named() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.ch)
	w.ch = make(chan struct{})
}
