package alert

import (
	"context"
	"sync"

	"lookout/control/state"
)

// maxBacklog bounds the due deliveries a pass keeps for the slots that
// free after it (Dispatcher.backlogMax, which tests lower).
const maxBacklog = 128

// queued is a due delivery a pass saw and did not start, with its
// account.
type queued struct {
	due     state.DueDelivery
	account string
}

// queue keeps a due delivery the pass did not start in the backlog, unless
// the backlog is full. It keeps at most an eighth of the backlog per
// channel and half per account, so that a full backlog spans enough
// channels and accounts to fill the slots even when one channel's
// deliveries come first (only ChannelConcurrency of them can be under
// way). What it does not keep is due still: the backlog no longer holds
// everything due (truncated), and a later read finds it.
func (d *Dispatcher) queue(due state.DueDelivery, account string) {
	if len(d.backlog) == d.backlogMax || d.queuedChan[due.ChannelRef] >= max(d.backlogMax/8, d.o.ChannelConcurrency) ||
		d.queuedAcct[account] >= max(d.backlogMax/2, d.o.AccountConcurrency) {
		d.truncated = true
		return
	}
	d.backlog = append(d.backlog, queued{due: due, account: account})
	d.queuedChan[due.ChannelRef]++
	d.queuedAcct[account]++
}

// resetBacklog empties the backlog for a pass to fill.
func (d *Dispatcher) resetBacklog() {
	clear(d.backlog)
	d.backlog, d.truncated = d.backlog[:0], false
	if d.queuedChan == nil {
		d.queuedChan, d.queuedAcct = map[string]int{}, map[string]int{}
	}
	clear(d.queuedChan)
	clear(d.queuedAcct)
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
