package link

import (
	"math/rand/v2"
	"time"
)

// Backoff is an exponential backoff with jitter: each Next waits about
// twice the previous, from Min up to Max, each wait drawn at random
// between half and all of it (so agents cut off together do not all come
// back in the same instant). Not safe for concurrent use.
type Backoff struct {
	Min, Max time.Duration
	n        int
}

// Next returns the next wait.
func (b *Backoff) Next() time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = 500 * time.Millisecond
	}
	if hi < lo {
		hi = lo
	}
	d := lo
	for range b.n {
		if d >= hi/2 {
			d = hi
			break
		}
		d *= 2
	}
	b.n++
	half := d / 2
	return half + rand.N(d-half+1)
}

// Fresh tells whether no wait was taken since the last Reset: the failure
// at hand is the first after a success.
func (b *Backoff) Fresh() bool { return b.n == 0 }

// Reset starts again from Min (after a success).
func (b *Backoff) Reset() { b.n = 0 }

// Sleep waits d or until done is closed; it reports whether it waited
// the whole d.
func Sleep(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
		return true
	}
}
