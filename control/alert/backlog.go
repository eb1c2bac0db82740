package alert

import (
	"context"
	"sync"

	"lookout/control/state"
)

// maxBacklog bounds the due deliveries a pass keeps for the slots that
// free after it.
const maxBacklog = 128

// queued is a due delivery a pass saw and did not start, with its
// account.
type queued struct {
	due     state.DueDelivery
	account string
}

// queue keeps a due delivery the pass did not start in the backlog, and
// tells the pass whether to read on: not once the backlog is full (the
// pass then stopped before the end of the due part).
func (d *Dispatcher) queue(due state.DueDelivery, account string) bool {
	if len(d.backlog) == maxBacklog {
		d.truncated = true
		return false
	}
	d.backlog = append(d.backlog, queued{due: due, account: account})
	return true
}

// fill starts an attempt for the deliveries of the backlog, in order,
// while a slot is free, as the pass that made it would have, and keeps the
// others. It tells whether the outbox must be read: slots are still free
// and the last pass left due deliveries unread.
//
// A delivery of the backlog may have changed since the pass read its key
// (given up with its channel, say): the attempt reads its alert and tries
// it only if it is still due.
func (d *Dispatcher) fill(ctx context.Context, wg *sync.WaitGroup) (read bool) {
	now := d.o.Now()
	kept, full := d.backlog[:0], false
	for _, q := range d.backlog {
		if !full {
			switch d.claim(q.due, q.account) {
			case claimStart:
				wg.Go(func() { d.attempt(ctx, q.due, q.account, nil, now) })
				continue
			case claimFull:
				full = true
			}
		}
		kept = append(kept, q)
	}
	clear(d.backlog[len(kept):])
	d.backlog = kept
	return !full && d.truncated
}

// slotsTaken tells whether no attempt can start now.
func (d *Dispatcher) slotsTaken() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running >= d.o.Concurrency || d.recording >= maxRecording
}

// slotFreed wakes Run to fill a slot from the backlog. It never blocks.
func (d *Dispatcher) slotFreed() {
	select {
	case d.freed <- struct{}{}:
	default:
	}
}
