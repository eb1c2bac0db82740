package alert

import (
	"context"
	"testing"
	"time"

	"lookout/control/alert/channel/webhook"
)

// TestFreedSlotsAreFilledFromTheBacklog: with more alerts due than a pass
// keeps, every one is delivered once without the Interval's reads, and
// the slots that free are filled from what a pass saw rather than by a
// read of the outbox each.
func TestFreedSlotsAreFilledFromTheBacklog(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	n := 2*maxBacklog + 10
	e.failMany("job", n)
	d := e.dispatcher(DispatcherOptions{Interval: time.Hour, Concurrency: 4, ChannelConcurrency: 4})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e.waitFor("every alert delivered", e.noPending)
	if got := r.count(); got != n {
		t.Fatalf("the receiver got %d requests for %d alerts", got, n)
	}
	d.mu.Lock()
	reads := d.reads
	d.mu.Unlock()
	t.Logf("%d reads", reads)
	// A read per backlog, and one when the last records are read back.
	if reads > uint64(n/maxBacklog)+4 {
		t.Errorf("%d reads of the outbox for %d deliveries, %d at a time: the freed slots were not filled from the backlog", reads, n, 4)
	}
}
