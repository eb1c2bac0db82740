package ratelimit

import "time"

// Throttle counts failed authentications (wrong tokens, wrong passwords)
// per client address: each address has a bucket of Burst failures,
// refilled at PerSecond. Nothing it does holds a lock while a secret is
// checked, so a slow hash (bcrypt) of one address never delays another's.
type Throttle struct {
	b    *Buckets
	rate Rate
}

// ThrottleOptions configures a Throttle.
type ThrottleOptions struct {
	// Name labels the metrics.
	Name string
	// Burst failures are allowed in a row, refilled at PerSecond.
	Burst     int
	PerSecond float64
	// MaxKeys caps the addresses tracked (default DefaultMaxKeys).
	MaxKeys int
	// Metrics, when set, counts under Name.
	Metrics *Metrics
}

// NewThrottle returns a throttle that tracks no address yet.
func NewThrottle(o ThrottleOptions) *Throttle {
	return &Throttle{
		b:    New(Options{Name: o.Name, MaxKeys: o.MaxKeys, Metrics: o.Metrics}),
		rate: Rate{PerSecond: o.PerSecond, Burst: o.Burst},
	}
}

// Check decides an attempt from addr at now whose secret verify checks,
// for a secret that must not be checked while its address is throttled
// (a password: a right answer while throttled would tell a guesser it is
// right).
//
// While addr's bucket is empty it returns false and how long to wait,
// without calling verify. Otherwise one failure is reserved from the
// bucket, verify runs with no lock held, and a success gives the failure
// back. So concurrent attempts from one address cannot outnumber its
// budget, and no attempt waits for another's verify.
//
// An address that found the throttle at its cap (MaxKeys) shares the
// overflow bucket: it is always verified, and only a failure is counted
// there, answered with the overflow's wait when it is empty. So an
// attacker filling the table cannot lock anyone's right secret out.
func (t *Throttle) Check(addr string, now time.Time, verify func() bool) (ok bool, wait time.Duration) {
	b := t.b
	b.mu.Lock()
	b.sweepLocked(now)
	bk, shared := b.bucketLocked(addr, t.rate, now)
	if !shared {
		bk.fill(now)
		if bk.tokens < 1 {
			wait := bk.wait()
			b.met.refused()
			b.mu.Unlock()
			return false, wait
		}
		bk.tokens--
	}
	b.mu.Unlock()

	if verify() {
		if !shared {
			b.Refund(addr, now)
		}
		return true, 0
	}
	if !shared {
		return false, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	res := b.overflow.take(now)
	if !res.OK {
		b.met.refused()
	}
	return false, res.Wait
}

// Fail counts a failure of addr at now, for a secret that was already
// checked (a token compared in constant time: a right one is let through
// without asking the throttle). It returns 0 while addr is within its
// budget, else how long until it is again; the caller then answers 429.
func (t *Throttle) Fail(addr string, now time.Time) time.Duration {
	res := t.b.Take(addr, t.rate, now)
	if res.OK {
		return 0
	}
	return res.Wait
}

// Wait is how long addr stays throttled at now (0: it is not).
func (t *Throttle) Wait(addr string, now time.Time) time.Duration { return t.b.Wait(addr, now) }

// Len is the number of addresses tracked.
func (t *Throttle) Len() int { return t.b.Len() }
