package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lookout/cluster/clusterapi"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// The collecting goroutine of the Batcher and the Apply of one batch.

// loop collects batches and starts their Apply, one batch at a time.
func (b *Batcher) loop() {
	defer close(b.loopDone)
	var carry *waiter // the event that did not fit the previous batch
	for {
		first := carry
		carry = nil
		if first == nil {
			select {
			case first = <-b.in:
			case <-b.stopping:
				return
			}
		}
		batch, next, ok := b.collect(first)
		if !ok {
			b.fail(batch, clusterapi.ErrShutdown)
			if next != nil {
				b.fail([]*waiter{next}, clusterapi.ErrShutdown)
			}
			return
		}
		carry = next
		b.applies.Add(1)
		go b.apply(batch)
	}
}

// collect fills a batch that starts with first until it is full or
// MaxDelay has passed, and then until an in-flight slot is free (filling
// further while none is). It returns the batch, the event that did not fit
// (or nil) and false when the batcher is stopping; on true it holds a slot.
func (b *Batcher) collect(first *waiter) (batch []*waiter, next *waiter, ok bool) {
	batch = []*waiter{first}
	bytes, count := first.size, len(first.events)
	timer := time.NewTimer(b.s.MaxDelay)
	defer timer.Stop()
	timeout := timer.C
	full := count >= b.s.MaxBatch || bytes >= b.s.MaxBytes
	for {
		in := b.in
		if full {
			in = nil
		}
		var slots chan<- struct{}
		if full || timeout == nil {
			slots = b.slots
		}
		select {
		case w := <-in:
			if bytes+w.size > b.s.MaxBytes || count+len(w.events) > b.s.MaxBatch {
				return batch, w, b.takeSlot()
			}
			batch = append(batch, w)
			bytes += w.size
			count += len(w.events)
			full = count >= b.s.MaxBatch || bytes >= b.s.MaxBytes
		case <-timeout:
			timeout = nil
		case slots <- struct{}{}:
			return batch, nil, true
		case <-b.stopping:
			return batch, nil, false
		}
	}
}

// takeSlot waits for an in-flight slot; false when the batcher stops first.
func (b *Batcher) takeSlot() bool {
	select {
	case b.slots <- struct{}{}:
		return true
	case <-b.stopping:
		return false
	}
}

// apply proposes one batch and answers its waiters; it holds a slot.
func (b *Batcher) apply(batch []*waiter) {
	defer b.applies.Done()
	defer func() { <-b.slots }()
	var events []*raftv1.Event
	for _, w := range batch {
		events = append(events, w.events...)
	}
	cmd := &raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{
		Events: events, RetentionCount: b.retention,
	}}}
	b.batches.Add(1)
	b.events.Add(uint64(len(events)))
	ctx, cancel := context.WithTimeout(b.ctx, b.s.ApplyTimeout)
	res, err := b.cluster.Apply(ctx, cmd)
	cancel()
	if err == nil {
		err = checkResult(res, len(events))
	}
	b.metrics.Batch(len(events), err == nil)
	if err != nil {
		if b.ctx.Err() != nil && !errors.Is(err, clusterapi.ErrShutdown) {
			err = fmt.Errorf("%w: %w", clusterapi.ErrShutdown, err)
		}
		b.errs.Add(1)
		b.log.Warn("ingest batch failed", "events", len(events), "error", err)
		b.fail(batch, err)
		return
	}
	at := 0
	for _, w := range batch {
		w.done <- answer{results: res.Events[at : at+len(w.events)]}
		at += len(w.events)
	}
}

// checkResult tells whether res answers a batch of n events.
func checkResult(res *raftv1.Result, n int) error {
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		return fmt.Errorf("state machine refused the ingest batch (%s): %s", res.GetStatus(), res.GetMessage())
	}
	if len(res.GetEvents()) != n {
		return fmt.Errorf("state machine gave %d event results for %d events", len(res.GetEvents()), n)
	}
	return nil
}

// fail answers every waiter of batch with err.
func (b *Batcher) fail(batch []*waiter, err error) {
	for _, w := range batch {
		b.failedEvents.Add(uint64(len(w.events)))
		w.done <- answer{err: err}
	}
}
