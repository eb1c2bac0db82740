package alert

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"lookout/control/alert/channel/webhook"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
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
	runDispatcher(t, d)
	e.waitFor("every alert delivered", e.noPending)
	if got := r.count(); got != n {
		t.Fatalf("the receiver got %d requests for %d alerts", got, n)
	}
	d.mu.Lock()
	reads := d.reads
	d.mu.Unlock()
	// A read each time the backlog holds no more of the channel's
	// deliveries (an eighth of it), and one when the last records are
	// read back; a read per freed slot would be about n/2.
	if reads > uint64(n/(maxBacklog/8))+4 {
		t.Errorf("%d reads of the outbox for %d deliveries, %d at a time: the freed slots were not filled from the backlog", reads, n, 4)
	}
}

// TestWakesWhileSlotsAreTakenWaitForTheBacklog: while every slot is taken
// and the backlog holds deliveries, alerts raised (Notify) do not make the
// dispatcher read the outbox; once the slot frees, the backlog and then
// the outbox are sent.
func TestWakesWhileSlotsAreTakenWaitForTheBacklog(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	release := make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		<-release
	}))
	defer gate.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	e.defaultChannel("ch-gate", webhook.Type, []byte(`{"url":"`+gate.URL+`","secret":"`+secret+`"}`))
	e.fail("first")
	// The alerts after it go to another channel.
	e.apply(&raftv1.Command{Op: &raftv1.Command_UpdateChannel{UpdateChannel: &raftv1.UpdateChannel{
		AccountId: acct, ChannelId: "ch-gate", Type: webhook.Type, Name: "ch-gate", ConfigJson: []byte(`{"url":"` + gate.URL + `","secret":"` + secret + `"}`)}}})
	e.defaultChannel("ch-ok", webhook.Type, r.config())
	e.fail("second")

	d := e.dispatcher(DispatcherOptions{Interval: time.Hour, Concurrency: 1, SendTimeout: time.Hour})
	readsOf := func() uint64 { d.mu.Lock(); defer d.mu.Unlock(); return d.reads }
	runDispatcher(t, d)
	e.waitFor("the first read", func() bool { return readsOf() == 1 })
	settle()
	if r.count() != 0 {
		t.Fatal("the second alert was sent while the only slot was taken")
	}
	for i := range 5 {
		e.fail(fmt.Sprint("more-", i))
		d.Notify()
		settle()
	}
	if reads := readsOf(); reads != 1 {
		t.Fatalf("%d reads of the outbox while the only slot was taken and the backlog held a delivery, want 1", reads)
	}
	unblock()
	e.waitFor("every alert sent", func() bool { return r.count() == 6 })
}

// TestBacklogOfDeadChannelsDoesNotStarveOthers: two dead channels' many
// deliveries come first in the outbox and fill the backlog; while a slot is
// free the pass reads on past them, and the healthy channel's alerts are
// sent while the dead ones' are held.
func TestBacklogOfDeadChannelsDoesNotStarveOthers(t *testing.T) {
	e := newEnv(t)
	dead1, dead2, ok := newHanging(t), newHanging(t), newReceiver(t)
	e.defaultChannel("ch-dead-1", webhook.Type, dead1.config())
	e.defaultChannel("ch-dead-2", webhook.Type, dead2.config())
	e.failMany("dead", 10)
	for id, h := range map[string]*hanging{"ch-dead-1": dead1, "ch-dead-2": dead2} { // the alerts after go elsewhere
		e.apply(&raftv1.Command{Op: &raftv1.Command_UpdateChannel{UpdateChannel: &raftv1.UpdateChannel{
			AccountId: acct, ChannelId: id, Type: webhook.Type, Name: id, ConfigJson: h.config()}}})
	}
	e.advance(time.Millisecond)
	e.defaultChannel("ch-ok", webhook.Type, ok.config())
	e.failMany("ok", 5)
	d := e.dispatcher(DispatcherOptions{Interval: time.Hour, Concurrency: 6, SendTimeout: time.Hour})
	d.backlogMax = 4 // two of each dead channel fill it
	runDispatcher(t, d)
	e.waitFor("the healthy channel's alerts", func() bool { return ok.count() == 5 })
}

// runDispatcher runs d until the test ends.
func runDispatcher(t *testing.T, d *Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestOwnerFromTheDueKeyReadsNoAlert: a due key that carries the account
// gives it without a read of the alert; one that does not (written before
// the keys carried it) reads the alert once.
func TestOwnerFromTheDueKeyReadsNoAlert(t *testing.T) {
	e := newEnv(t)
	e.defaultChannel("ch-1", webhook.Type, newReceiver(t).config())
	a := e.fail("backup")
	d := e.dispatcher(DispatcherOptions{})
	before := e.store.OutboxReads()
	if account, _, err := d.owner(state.DueDelivery{AlertID: a.GetId(), ChannelRef: "chan:ch-1", AccountID: acct}); err != nil || account != acct {
		t.Fatalf("owner %q, %v", account, err)
	}
	if reads := e.store.OutboxReads() - before; reads != 0 {
		t.Fatalf("%d outbox reads for a key that carries the account", reads)
	}
	before = e.store.OutboxReads()
	if account, read, err := d.owner(state.DueDelivery{AlertID: a.GetId(), ChannelRef: "chan:ch-1"}); err != nil || account != acct || read == nil {
		t.Fatalf("owner of a key without the account: %q, %v, %v", account, read, err)
	}
	if reads := e.store.OutboxReads() - before; reads != 1 {
		t.Fatalf("%d outbox reads for a key without the account, want 1 (the alert)", reads)
	}
}
