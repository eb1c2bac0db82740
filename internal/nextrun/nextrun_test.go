package nextrun

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

type job struct {
	Entry
	id int
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestQueueAgainstASortedList: random pushes, moves, removals and pops
// leave the queue holding what a plain list holds, popped in time order,
// each item knowing whether it is queued.
func TestQueueAgainstASortedList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q Queue[*job]
	queued := map[int]*job{}
	var jobs []*job
	at := func() time.Time { return t0.Add(time.Duration(rng.IntN(1000)) * time.Second) }
	for step := range 5000 {
		switch op := rng.IntN(5); {
		case op == 0 || len(jobs) == 0:
			j := &job{id: len(jobs)}
			j.Next = at()
			jobs = append(jobs, j)
			q.Push(j)
			queued[j.id] = j
		case op == 1:
			j := jobs[rng.IntN(len(jobs))]
			j.Next = at()
			q.Schedule(j)
			queued[j.id] = j
		case op == 2:
			j := jobs[rng.IntN(len(jobs))]
			q.Remove(j)
			delete(queued, j.id)
		case op == 3:
			now := at()
			var prev time.Time
			for {
				j, ok := q.PopDue(now)
				if !ok {
					break
				}
				if j.Next.After(now) || j.Next.Before(prev) {
					t.Fatalf("step %d: popped %v after %v at %v", step, j.Next, prev, now)
				}
				if queued[j.id] != j {
					t.Fatalf("step %d: popped job %d, not queued", step, j.id)
				}
				prev = j.Next
				delete(queued, j.id)
			}
			if first, ok := q.First(); ok && !first.Next.After(now) {
				t.Fatalf("step %d: job %d due at %v left at %v", step, first.id, first.Next, now)
			}
		default:
			if q.Len() != len(queued) {
				t.Fatalf("step %d: %d queued, want %d", step, q.Len(), len(queued))
			}
		}
		for _, j := range jobs {
			if j.Queued() != (queued[j.id] == j) {
				t.Fatalf("step %d: job %d Queued() %v", step, j.id, j.Queued())
			}
		}
	}
	var want []time.Time
	for _, j := range queued {
		want = append(want, j.Next)
	}
	slices.SortFunc(want, time.Time.Compare)
	var got []time.Time
	for {
		j, ok := q.PopDue(t0.Add(time.Hour))
		if !ok {
			break
		}
		got = append(got, j.Next)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("drained %v, want %v", got, want)
	}
}

// TestEmpty: an empty queue has no first item and nothing due.
func TestEmpty(t *testing.T) {
	var q Queue[*job]
	if _, ok := q.First(); ok {
		t.Fatal("first item of an empty queue")
	}
	if _, ok := q.PopDue(t0); ok {
		t.Fatal("popped from an empty queue")
	}
	j := &job{}
	q.Remove(j) // not queued: nothing happens
	if j.Queued() || q.Len() != 0 {
		t.Fatal("removing an unqueued item changed something")
	}
}

// TestAlarm: the alarm is armed for the first item, and again only when
// that item's time changed or the alarm rang; an empty queue has none.
func TestAlarm(t *testing.T) {
	var armed []time.Duration
	after := func(d time.Duration) <-chan time.Time {
		armed = append(armed, d)
		return make(chan time.Time)
	}
	var q Queue[*job]
	var a Alarm
	q.SetAlarm(&a, t0, after)
	if a.C != nil || len(armed) != 0 {
		t.Fatalf("empty queue: alarm %v, armed %v", a.C, armed)
	}
	j := &job{}
	j.Next = t0.Add(time.Minute)
	q.Push(j)
	q.SetAlarm(&a, t0, after)
	q.SetAlarm(&a, t0.Add(time.Second), after) // unchanged: the same alarm
	if a.C == nil || !slices.Equal(armed, []time.Duration{time.Minute}) {
		t.Fatalf("armed %v", armed)
	}
	k := &job{}
	k.Next = t0.Add(30 * time.Second)
	q.Push(k) // an earlier first item
	q.SetAlarm(&a, t0.Add(10*time.Second), after)
	a.C = nil // rang
	q.SetAlarm(&a, t0.Add(10*time.Second), after)
	if !slices.Equal(armed, []time.Duration{time.Minute, 20 * time.Second, 20 * time.Second}) {
		t.Fatalf("armed %v", armed)
	}
	q.Remove(j)
	q.Remove(k)
	q.SetAlarm(&a, t0, after)
	if a.C != nil {
		t.Fatal("an alarm for an empty queue")
	}
}
