// Package ratelimit holds the keyed token buckets every rate limit and
// throttle of Lookout is made of: the Ingest API's per-key limit, the
// Management API's per-key and per-address limits, and the throttles of
// wrong secrets (operator token, metrics token, panel passwords).
//
// Buckets is a map of token buckets with a cap on its keys. Memory stays
// bounded without handing anyone extra tokens:
//
//   - A bucket that is full again is dropped by a sweep (at most once per
//     Options.SweepEvery): a full bucket is the same as a new one, so
//     nothing is lost.
//   - A bucket that is not full is never dropped, however many keys come
//     after it: evicting it would give its key a fresh bucket, so anyone
//     able to make new keys (an attacker with many addresses) could reset
//     their own bucket at will.
//   - When the map is at its cap, a new key first sweeps (at most once a
//     second while full); if the map is still full, the key shares one
//     overflow bucket with every other key that did not fit. So at the cap
//     newcomers are limited together, and the keys already held keep their
//     own buckets.
//
// Each Buckets reports its size, overflows, sweeps and refusals under its
// Name (Metrics).
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// The defaults of Options.
const (
	DefaultMaxKeys    = 10_000
	DefaultSweepEvery = time.Minute
	// capSweepEvery is how often a map at its cap may sweep for a new key.
	capSweepEvery = time.Second
)

// Options configures Buckets; a zero field takes its default.
type Options struct {
	// Name labels the metrics (e.g. "admin_token", "ingest_key").
	Name string
	// MaxKeys caps the keys with a bucket of their own.
	MaxKeys int
	// SweepEvery is how often full buckets are dropped.
	SweepEvery time.Duration
	// Metrics, when set, counts for this map under Name.
	Metrics *Metrics
}

// Rate is a bucket's size: Burst tokens, refilled at PerSecond.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Buckets is a map of token buckets keyed by string (a key id, a client
// address), each sized by the Rate its caller passes, at most MaxKeys of
// them plus one shared overflow bucket. Safe for concurrent use; every
// method takes the time, so tests drive the clock.
type Buckets struct {
	o   Options
	met *limiterMetrics

	mu        sync.Mutex
	m         map[string]*bucket
	overflow  *bucket
	lastSweep time.Time
	capSweep  time.Time
}

// bucket is one token bucket: tokens at time at.
type bucket struct {
	tokens float64
	at     time.Time
	rate   Rate
}

// New returns an empty map.
func New(o Options) *Buckets {
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = DefaultSweepEvery
	}
	return &Buckets{o: o, met: o.Metrics.forLimiter(o.Name), m: map[string]*bucket{}}
}

// Result is the answer of Take.
type Result struct {
	// OK: a token was taken.
	OK bool
	// Wait is how long until the bucket has a token again (0 when OK).
	Wait time.Duration
	// Remaining is the tokens left in the bucket after the call.
	Remaining float64
	// Full is how long until the bucket is full again.
	Full time.Duration
	// Shared: the key shares the overflow bucket (the map is at its cap).
	Shared bool
}

// Take spends one token of key's bucket, sized r, at now. A bucket whose
// rate changed (a plan changed) keeps its tokens, up to the new burst.
func (b *Buckets) Take(key string, r Rate, now time.Time) Result {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweepLocked(now)
	bk, shared := b.bucketLocked(key, r, now)
	res := bk.take(now)
	res.Shared = shared
	if !res.OK {
		b.met.refused()
	}
	return res
}

// Wait is how long until key's bucket has a token at now; 0 when it has
// one or the key has no bucket of its own. It creates nothing.
func (b *Buckets) Wait(key string, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bk := b.m[key]; bk != nil {
		bk.fill(now)
		return bk.wait()
	}
	return 0
}

// Refund gives back a token taken from key's own bucket (an attempt that
// turned out not to count), up to the bucket's burst.
func (b *Buckets) Refund(key string, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bk := b.m[key]; bk != nil {
		bk.fill(now)
		bk.tokens = min(bk.tokens+1, float64(bk.rate.Burst))
	}
}

// Len is the number of keys with a bucket of their own.
func (b *Buckets) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

// bucketLocked returns key's bucket, made with r if it has none; at the
// cap, the overflow bucket (shared true).
func (b *Buckets) bucketLocked(key string, r Rate, now time.Time) (bk *bucket, shared bool) {
	if bk := b.m[key]; bk != nil {
		bk.resize(r, now)
		return bk, false
	}
	if len(b.m) >= b.o.MaxKeys && now.Sub(b.capSweep) >= capSweepEvery {
		b.capSweep = now
		b.dropFullLocked(now)
	}
	if len(b.m) >= b.o.MaxKeys {
		if b.overflow == nil {
			b.overflow = newBucket(r, now)
		}
		b.overflow.resize(r, now)
		b.met.overflowed()
		return b.overflow, true
	}
	bk = newBucket(r, now)
	b.m[key] = bk
	b.met.size(len(b.m))
	return bk, false
}

// sweepLocked drops the full buckets, at most once per SweepEvery.
func (b *Buckets) sweepLocked(now time.Time) {
	if now.Sub(b.lastSweep) < b.o.SweepEvery {
		return
	}
	b.lastSweep = now
	b.dropFullLocked(now)
}

// dropFullLocked drops every bucket that is full at now.
func (b *Buckets) dropFullLocked(now time.Time) {
	n := 0
	for key, bk := range b.m {
		bk.fill(now)
		if bk.tokens >= float64(bk.rate.Burst) {
			delete(b.m, key)
			n++
		}
	}
	b.met.swept(n)
	b.met.size(len(b.m))
}

func newBucket(r Rate, now time.Time) *bucket {
	return &bucket{tokens: float64(r.Burst), at: now, rate: r}
}

// fill adds the tokens earned since the bucket's time, up to its burst.
// A time before the bucket's (a clock step back) earns nothing.
func (bk *bucket) fill(now time.Time) {
	if now.After(bk.at) {
		bk.tokens = min(float64(bk.rate.Burst), bk.tokens+now.Sub(bk.at).Seconds()*bk.rate.PerSecond)
		bk.at = now
	}
}

// resize gives the bucket rate r, keeping its tokens up to the new burst.
func (bk *bucket) resize(r Rate, now time.Time) {
	if bk.rate == r {
		return
	}
	bk.fill(now)
	bk.rate = r
	bk.tokens = min(bk.tokens, float64(r.Burst))
}

// take spends one token if there is one.
func (bk *bucket) take(now time.Time) Result {
	bk.fill(now)
	ok := bk.tokens >= 1
	if ok {
		bk.tokens--
	}
	res := Result{OK: ok, Remaining: bk.tokens, Full: bk.until(float64(bk.rate.Burst))}
	if !ok {
		res.Wait = bk.wait()
	}
	return res
}

// wait is how long until the bucket holds one token.
func (bk *bucket) wait() time.Duration { return bk.until(1) }

// until is how long until the bucket holds n tokens (n at most its burst).
func (bk *bucket) until(n float64) time.Duration {
	if bk.tokens >= n {
		return 0
	}
	if bk.rate.PerSecond <= 0 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Ceil((n - bk.tokens) / bk.rate.PerSecond * float64(time.Second)))
}
