package fairshare

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder notes the order tasks start in and holds each until released.
type recorder struct {
	mu      sync.Mutex
	started []string
	release map[string]chan struct{}
}

func newRecorder() *recorder { return &recorder{release: map[string]chan struct{}{}} }

// task is a task named name that blocks until released (or the pool's
// context ends).
func (r *recorder) task(name string) Task {
	r.mu.Lock()
	r.release[name] = make(chan struct{})
	ch := r.release[name]
	r.mu.Unlock()
	return func(ctx context.Context, w *Worker) {
		r.mu.Lock()
		r.started = append(r.started, name)
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
}

func (r *recorder) done(name string) { close(r.release[name]) }

func (r *recorder) order() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.started)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func newPool(t *testing.T, o Options) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	p := New(ctx, o)
	t.Cleanup(func() { cancel(); p.Close() })
	return p
}

// TestShareBoundsOneKey: a key's tasks beyond its share wait (counted as
// throttled) while another key's task starts on a free worker.
func TestShareBoundsOneKey(t *testing.T) {
	var mu sync.Mutex
	last := -1
	r := newRecorder()
	p := newPool(t, Options{Workers: 4, Share: 2, Throttled: func(n int) { mu.Lock(); last = n; mu.Unlock() }})
	for _, n := range []string{"a1", "a2", "a3", "a4", "a5"} {
		p.Submit("a", r.task(n))
	}
	waitFor(t, "a's share to start", func() bool { return len(r.order()) == 2 })
	p.Submit("b", r.task("b1"))
	waitFor(t, "b's task", func() bool { return len(r.order()) == 3 })
	if got := r.order(); !slices.Equal(slices.Sorted(slices.Values(got[:2])), []string{"a1", "a2"}) || got[2] != "b1" {
		t.Fatalf("started %v", got)
	}
	if st := p.Stats(); st != (Stats{Running: 3, Waiting: 3, Throttled: 3}) {
		t.Fatalf("stats %+v", st)
	}
	mu.Lock()
	if last != 3 {
		t.Errorf("Throttled was last told %d, want 3", last)
	}
	mu.Unlock()
	r.done("a1")
	waitFor(t, "a's next task", func() bool { return len(r.order()) == 4 })
	if got := r.order(); got[3] != "a3" {
		t.Fatalf("started %v", got)
	}
}

// TestFewestUnderWayFirst: a free worker goes to the key with the fewest
// tasks under way, even when another key's task waited longer.
func TestFewestUnderWayFirst(t *testing.T) {
	r := newRecorder()
	p := newPool(t, Options{Workers: 2, Share: -1})
	for _, n := range []string{"a1", "a2", "a3"} {
		p.Submit("a", r.task(n))
	}
	p.Submit("b", r.task("b1"))
	waitFor(t, "two tasks", func() bool { return len(r.order()) == 2 })
	r.done("a1")
	waitFor(t, "the next task", func() bool { return len(r.order()) == 3 })
	if got := r.order(); got[2] != "b1" {
		t.Fatalf("started %v, want b1 third (a has one under way, b none)", got)
	}
}

// TestWaitHoldsNoWorker: a paused task gives its worker to another and,
// its wait over, gets the next free worker before tasks not started; it
// keeps its place in its key's share meanwhile.
func TestWaitHoldsNoWorker(t *testing.T) {
	r := newRecorder()
	p := newPool(t, Options{Workers: 1, Share: 1})
	wake, hold := make(chan time.Time), make(chan struct{})
	resumed := make(chan bool, 1)
	p.Submit("a", func(ctx context.Context, w *Worker) {
		resumed <- w.Wait(wake)
		<-hold
	})
	p.Submit("a", r.task("a2")) // a's share is the paused task's
	p.Submit("b", r.task("b1"))
	waitFor(t, "b1 on the paused task's worker", func() bool { return len(r.order()) == 1 })
	p.Submit("c", r.task("c1"))
	if st := p.Stats(); st != (Stats{Running: 1, Paused: 1, Waiting: 2, Throttled: 1}) {
		t.Fatalf("stats %+v", st)
	}
	wake <- time.Time{}
	waitFor(t, "the resumed task to queue for a worker", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.resume) == 1
	})
	r.done("b1")
	if !<-resumed {
		t.Fatal("Wait answered false")
	}
	if st := p.Stats(); st != (Stats{Running: 1, Waiting: 2, Throttled: 1}) || len(r.order()) != 1 {
		t.Fatalf("stats %+v, started %v: the resumed task should hold the worker before c1", st, r.order())
	}
	close(hold)
	waitFor(t, "the next tasks", func() bool { return len(r.order()) == 2 })
}

// TestCloseDropsWaiting: Close drops the tasks not started and waits for
// those under way, paused ones included, once the context ends.
func TestCloseDropsWaiting(t *testing.T) {
	r := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	p := New(ctx, Options{Workers: 1})
	paused := make(chan bool, 1)
	p.Submit("a", func(ctx context.Context, w *Worker) { paused <- w.Wait(nil) })
	p.Submit("b", r.task("b1"))
	p.Submit("b", r.task("b2"))
	waitFor(t, "b1", func() bool { return len(r.order()) == 1 })
	cancel()
	p.Close()
	if got := r.order(); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("started %v", got)
	}
	if <-paused {
		t.Fatal("Wait answered true after the context ended")
	}
	if st := p.Stats(); st != (Stats{}) {
		t.Fatalf("stats after Close %+v", st)
	}
}
