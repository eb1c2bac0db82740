package alert

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"lookout/control/alert/channel/webhook"
)

// onePass runs one pass of d, waits for the attempts it started and
// returns the next try the pass saw.
func onePass(t *testing.T, d *Dispatcher) time.Time {
	t.Helper()
	var wg sync.WaitGroup
	next, err := d.pass(context.Background(), &wg)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// TestPassReadsOnlyDueDeliveries: with 1,000 alerts whose first try is
// an hour away, a pass sends nothing and reads (next to) nothing of the
// outbox; with one due alert more, it sends that one and reads only it.
func TestPassReadsOnlyDueDeliveries(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	start := e.now()
	e.advance(time.Hour)
	e.failMany("later", 1000)
	e.clock.Store(start.UnixMilli())
	d := e.dispatcher(DispatcherOptions{})

	before := e.store.OutboxReads()
	next := onePass(t, d)
	if reads := e.store.OutboxReads() - before; r.count() != 0 || reads > 1 {
		t.Fatalf("a pass with nothing due sent %d and read %d outbox keys, want 0 and at most 1", r.count(), reads)
	}
	if !next.Equal(start.Add(time.Hour)) {
		t.Errorf("the pass saw the next try at %v, want %v", next, start.Add(time.Hour))
	}
	a := e.fail("now")
	before = e.store.OutboxReads()
	onePass(t, d)
	if reads := e.store.OutboxReads() - before; !slices.Equal(r.ids(), []string{a.GetId()}) || reads > 3 {
		t.Fatalf("a pass with one due sent %v (want [%s]) and read %d outbox keys, want at most 3", r.ids(), a.GetId(), reads)
	}
	if dl := e.delivery(a.GetId(), "chan:ch-1"); !dl.GetDelivered() {
		t.Errorf("delivery: %v", dl)
	}
}

// hanging is a webhook receiver that holds every request until the
// sender gives up, counting those under way.
type hanging struct {
	srv *httptest.Server

	mu      sync.Mutex
	waiting int
	got     int
}

func newHanging(t *testing.T) *hanging {
	h := &hanging{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Read to the end, so that the server sees the sender hang up.
		_, _ = io.Copy(io.Discard, req.Body)
		h.mu.Lock()
		h.waiting++
		h.got++
		h.mu.Unlock()
		<-req.Context().Done()
		h.mu.Lock()
		h.waiting--
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hanging) config() []byte {
	return []byte(`{"url":"` + h.srv.URL + `","secret":"` + secret + `"}`)
}

func (h *hanging) counts() (waiting, got int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting, h.got
}

// TestDeadChannelDoesNotDelayOthers: every alert goes to a channel whose
// endpoint hangs and to a healthy one; the healthy one gets all of them
// while the dead one's requests are still held.
func TestDeadChannelDoesNotDelayOthers(t *testing.T) {
	e := newEnv(t)
	dead, ok := newHanging(t), newReceiver(t)
	e.defaultChannel("ch-a-dead", webhook.Type, dead.config()) // first in every alert
	e.defaultChannel("ch-b-ok", webhook.Type, ok.config())
	const n = 10
	e.failMany("job", n)
	e.start(DispatcherOptions{Concurrency: 4, SendTimeout: time.Hour})
	e.waitFor("the healthy channel to get every alert", func() bool { return ok.count() == n })
	waiting, got := dead.counts()
	if waiting == 0 || waiting != got {
		t.Fatalf("the dead channel has %d requests held of %d: the test did not hold it", waiting, got)
	}
	if waiting > 2 {
		t.Errorf("%d requests held by one dead channel at once, want at most 2", waiting)
	}
}

// TestPassStartsAtMostMaxPerPass: a pass starts MaxPerPass attempts at
// most, earliest first; the next pass goes on.
func TestPassStartsAtMostMaxPerPass(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	var ids []string
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		ids = append(ids, e.fail(name).GetId())
		e.advance(time.Millisecond) // raised in this order: due in this order
	}
	d := e.dispatcher(DispatcherOptions{MaxPerPass: 2, ChannelConcurrency: 10})
	for _, want := range [][]string{ids[:2], ids[:4], ids} {
		onePass(t, d)
		got := r.ids()
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			t.Fatalf("after a pass the receiver has %v, want %v", got, want)
		}
	}
}
