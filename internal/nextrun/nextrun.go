// Package nextrun orders scheduled things by when each runs next: a
// min-heap that knows where every item sits, so that an item whose time
// changes is moved, and one taken off is removed, in O(log n). The agent's
// check runner (agent/runner) and the leader's check scheduler
// (control/checks) each keep one.
package nextrun

import (
	"container/heap"
	"time"
)

// Entry is an item's run time and its place in a Queue: embed it in the
// item's struct. Its zero value is not queued.
type Entry struct {
	// Next is when the item runs next. While the item is queued, change
	// it only with Queue.Fix (or Schedule) right after.
	Next  time.Time
	index int // index+1 in the queue; 0: not queued
}

// Queued tells whether the item is in a queue.
func (e *Entry) Queued() bool { return e.index > 0 }

func (e *Entry) entry() *Entry { return e }

// Item is a pointer to a struct that embeds Entry.
type Item interface{ entry() *Entry }

// Queue is a min-heap of items by Next; of two items due at the same time
// either may come first. The zero value is an empty queue. An item is in
// at most one queue.
type Queue[T Item] struct{ h items[T] }

// Len is the number of queued items.
func (q *Queue[T]) Len() int { return len(q.h) }

// First returns the item that runs first; false when the queue is empty.
func (q *Queue[T]) First() (T, bool) {
	if len(q.h) == 0 {
		var zero T
		return zero, false
	}
	return q.h[0], true
}

// PopDue takes off and returns the first item when its Next is not after
// now; false when none is due.
func (q *Queue[T]) PopDue(now time.Time) (T, bool) {
	if len(q.h) == 0 || q.h[0].entry().Next.After(now) {
		var zero T
		return zero, false
	}
	return heap.Pop(&q.h).(T), true
}

// Push queues x, which must not be queued.
func (q *Queue[T]) Push(x T) { heap.Push(&q.h, x) }

// Fix moves x, which must be queued, to its place after its Next changed.
func (q *Queue[T]) Fix(x T) { heap.Fix(&q.h, x.entry().index-1) }

// Schedule queues x at its Next: moves it when it is queued, else pushes it.
func (q *Queue[T]) Schedule(x T) {
	if x.entry().Queued() {
		q.Fix(x)
		return
	}
	q.Push(x)
}

// Remove takes x off the queue when it is queued.
func (q *Queue[T]) Remove(x T) {
	if x.entry().Queued() {
		heap.Remove(&q.h, x.entry().index-1)
	}
}

// Alarm wakes a loop when the first item of a Queue is due: C receives
// then. It is armed again only when that time changed, or after it rang.
type Alarm struct {
	// C receives when the first item is due; nil while the queue is
	// empty. Set it to nil when it has received.
	C  <-chan time.Time
	at time.Time
}

// SetAlarm arms a for the first item of q, at now, with after (time.After
// or a test's clock).
func (q *Queue[T]) SetAlarm(a *Alarm, now time.Time, after func(time.Duration) <-chan time.Time) {
	first, ok := q.First()
	switch {
	case !ok:
		a.C = nil
	case a.C == nil || !first.entry().Next.Equal(a.at):
		a.at = first.entry().Next
		a.C = after(a.at.Sub(now))
	}
}

// items is the heap.Interface of a Queue.
type items[T Item] []T

func (h items[T]) Len() int           { return len(h) }
func (h items[T]) Less(i, j int) bool { return h[i].entry().Next.Before(h[j].entry().Next) }
func (h items[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].entry().index, h[j].entry().index = i+1, j+1
}

func (h *items[T]) Push(x any) {
	e := x.(T)
	e.entry().index = len(*h) + 1
	*h = append(*h, e)
}

func (h *items[T]) Pop() any {
	old := *h
	n := len(old) - 1
	e := old[n]
	var zero T
	old[n] = zero
	e.entry().index = 0
	*h = old[:n]
	return e
}
