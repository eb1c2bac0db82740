package cluster

import (
	"context"
	"sync"

	"github.com/hashicorp/raft"
)

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

// forwardCtx is ctx, cancelled as soon as raft names a leader other than
// to, the one a write is being forwarded to: that one may be gone without
// a word (a killed machine answers nothing, and a dial to it hangs), and
// the command's request id makes the retry that follows safe. current is
// the leader raft names now ("" for none, which cancels nothing).
func forwardCtx(ctx context.Context, w *leaderWatch, current func() raft.ServerID, to raft.ServerID) (context.Context, context.CancelFunc) {
	fctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			named := w.next() // before the check, so no naming falls between
			if id := current(); id != "" && id != to {
				cancel()
				return
			}
			select {
			case <-named:
			case <-fctx.Done():
				return
			}
		}
	}()
	return fctx, cancel
}
