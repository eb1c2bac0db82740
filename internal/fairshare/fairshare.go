// Package fairshare is a worker pool shared by accounts (or any key) so
// that one cannot starve the others: at most Workers tasks hold a worker
// at once, and at most Share tasks of one key are under way at once. A
// target of one account that never answers then holds at most Share
// workers, and delays only that account's other tasks.
//
// A key's tasks beyond its share wait in the key's own queue, oldest
// first, never in front of another key's. When a worker frees, it goes to
// a paused task whose wait is over (Worker.Wait: a retry's delay), else
// to the oldest waiting task of the key with the fewest tasks under way.
// A paused task keeps its place in its key's share but holds no worker.
//
// Both the control plane's check scheduler (control/checks) and the
// agent's runner (agent/runner) run their executions here, keyed by
// account.
package fairshare

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// DefaultShare is how many tasks of one key are under way at once unless
// Options.Share says otherwise.
const DefaultShare = 8

// Options configures a Pool.
type Options struct {
	// Workers bounds the tasks holding a worker at once (default 64).
	Workers int
	// Share bounds the tasks of one key under way at once, holding a
	// worker or paused (default DefaultShare; negative: no bound but
	// Workers).
	Share int
	// Throttled, if set, is told the number of tasks waiting because
	// their key holds its share, each time it changes (under the pool's
	// lock: it must be quick).
	Throttled func(n int)
}

// Task is the work of one submission. It runs holding a worker; w lets it
// pause without one. ctx is the pool's.
type Task func(ctx context.Context, w *Worker)

// Pool runs tasks. Make it with New, Submit tasks, and Close it once its
// context has ended.
type Pool struct {
	ctx context.Context
	o   Options
	wg  sync.WaitGroup

	mu        sync.Mutex
	free      int             // workers free
	keys      map[string]*key // keys with tasks under way or waiting
	ready     keyHeap         // keys with waiting tasks and room in their share
	resume    []chan struct{} // paused tasks whose wait is over, oldest first
	seq       uint64          // submissions so far
	waiting   int             // tasks submitted, not started
	throttled int             // of which their key holds its share
	closed    bool
}

// key is one key's tasks.
type key struct {
	name      string
	active    int     // under way: holding a worker or paused
	queue     []entry // waiting, oldest first
	throttled int     // len(queue) while the share is full, else 0
	index     int     // in ready; -1 when not
}

type entry struct {
	seq  uint64
	task Task
}

// New makes a pool whose tasks run with ctx.
func New(ctx context.Context, o Options) *Pool {
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.Share == 0 {
		o.Share = DefaultShare
	}
	return &Pool{ctx: ctx, o: o, free: o.Workers, keys: map[string]*key{}}
}

// Submit queues task under key; it starts as soon as a worker is free and
// key has room in its share. After Close it is dropped.
func (p *Pool) Submit(name string, task Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	k := p.keys[name]
	if k == nil {
		k = &key{name: name, index: -1}
		p.keys[name] = k
	}
	p.seq++
	k.queue = append(k.queue, entry{seq: p.seq, task: task})
	p.waiting++
	p.settle(k)
	p.dispatch()
}

// Close drops the waiting tasks and waits for those under way, which
// should see their context end.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	for _, k := range p.keys {
		p.waiting -= len(k.queue)
		k.queue = nil
		p.settle(k)
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Stats are a pool's counts at one moment.
type Stats struct {
	// Running tasks hold a worker; Paused ones wait without one.
	Running, Paused int
	// Waiting tasks have not started; Throttled of them wait because
	// their key holds its share (the others for a free worker).
	Waiting, Throttled int
}

// Stats returns the counts now.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	active := 0
	for _, k := range p.keys {
		active += k.active
	}
	running := p.o.Workers - p.free
	return Stats{Running: running, Paused: active - running, Waiting: p.waiting, Throttled: p.throttled}
}

// full reports whether k holds its share.
func (p *Pool) full(k *key) bool { return p.o.Share > 0 && k.active >= p.o.Share }

// settle brings k's place in ready, its throttled count and its presence
// in keys in line with its tasks. Under mu.
func (p *Pool) settle(k *key) {
	throttled := 0
	if p.full(k) {
		throttled = len(k.queue)
	}
	if throttled != k.throttled {
		p.throttled += throttled - k.throttled
		k.throttled = throttled
		if p.o.Throttled != nil {
			p.o.Throttled(p.throttled)
		}
	}
	switch eligible := len(k.queue) > 0 && !p.full(k); {
	case eligible && k.index >= 0:
		heap.Fix(&p.ready, k.index)
	case eligible:
		heap.Push(&p.ready, k)
	case k.index >= 0:
		heap.Remove(&p.ready, k.index)
	}
	if k.active == 0 && len(k.queue) == 0 {
		delete(p.keys, k.name)
	}
}

// dispatch hands the free workers out: to paused tasks whose wait is
// over first, then to the next task of the key with the fewest under
// way. Under mu.
func (p *Pool) dispatch() {
	for p.free > 0 {
		if len(p.resume) > 0 {
			close(p.resume[0])
			p.resume[0] = nil
			p.resume = p.resume[1:]
			p.free--
			continue
		}
		if p.closed || p.ctx.Err() != nil || p.ready.Len() == 0 {
			return // a task started after the context ended would do nothing
		}
		k := p.ready[0]
		e := k.queue[0]
		k.queue[0] = entry{}
		k.queue = k.queue[1:]
		k.active++
		p.waiting--
		p.free--
		p.settle(k)
		p.wg.Go(func() { p.run(k, e.task) })
	}
}

// run runs task of k, then gives back what it holds.
func (p *Pool) run(k *key, task Task) {
	w := &Worker{p: p, held: true}
	defer func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if w.held {
			p.free++
		}
		k.active--
		p.settle(k)
		p.dispatch()
	}()
	task(p.ctx, w)
}

// Worker is a running task's hold on its worker.
type Worker struct {
	p    *Pool
	held bool
}

// Wait gives the worker back while it waits for wake (a retry's delay),
// keeping the task's place in its key's share, then waits for a worker
// again (ahead of tasks not started). It returns false, holding no
// worker, when the pool's context ended first.
func (w *Worker) Wait(wake <-chan time.Time) bool {
	p := w.p
	p.mu.Lock()
	w.held = false
	p.free++
	p.dispatch()
	p.mu.Unlock()
	select {
	case <-p.ctx.Done():
		return false
	case <-wake:
	}
	ch := make(chan struct{})
	p.mu.Lock()
	p.resume = append(p.resume, ch)
	p.dispatch()
	p.mu.Unlock()
	select {
	case <-ch:
		w.held = true
		return true
	case <-p.ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-ch: // granted meanwhile: give it back
		p.free++
		p.dispatch()
	default:
		for i, c := range p.resume {
			if c == ch {
				p.resume = append(p.resume[:i], p.resume[i+1:]...)
				break
			}
		}
	}
	return false
}

// keyHeap orders the keys that may start a task: fewest under way first,
// then the oldest waiting task.
type keyHeap []*key

func (h keyHeap) Len() int { return len(h) }
func (h keyHeap) Less(i, j int) bool {
	if h[i].active != h[j].active {
		return h[i].active < h[j].active
	}
	return h[i].queue[0].seq < h[j].queue[0].seq
}
func (h keyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *keyHeap) Push(x any) {
	k := x.(*key)
	k.index = len(*h)
	*h = append(*h, k)
}
func (h *keyHeap) Pop() any {
	old := *h
	k := old[len(old)-1]
	old[len(old)-1] = nil
	k.index = -1
	*h = old[:len(old)-1]
	return k
}
