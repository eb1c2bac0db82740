package keyauth

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Throttle counts failed authentications (wrong tokens, wrong passwords)
// per client address (ClientAddr): each address has a token bucket of
// burst failures, refilled at perSecond. While its bucket is empty every
// attempt from the address is refused, even a right one: checking it then
// would tell a guesser when it is right. So a right secret works again
// soon after its address stopped sending wrong ones.
//
// The addresses beyond throttleMaxAddrs share one overflow bucket, which
// only refuses wrong secrets: the secret is always checked, so an attacker
// filling the table cannot lock out the right one.
type Throttle struct {
	mu        sync.Mutex
	m         map[string]*rate.Limiter
	swept     time.Time
	burst     int
	perSecond float64
}

const (
	// throttleMaxAddrs bounds the addresses tracked; beyond it (an attack
	// from very many addresses) the new ones share one bucket.
	throttleMaxAddrs = 10_000
	// throttleSweep is how often buckets that have refilled are dropped.
	throttleSweep = time.Minute
	// overflowAddr is the shared bucket of the addresses beyond the cap.
	overflowAddr = "*"
)

// NewThrottle allows each address burst failures, refilled at perSecond.
func NewThrottle(burst int, perSecond float64) *Throttle {
	return &Throttle{m: map[string]*rate.Limiter{}, burst: burst, perSecond: perSecond}
}

// Check decides an attempt from addr at now: while addr is throttled it
// returns false and how long to wait, without calling verify; otherwise it
// returns verify's answer, and a failed verify spends one of addr's
// failures. An address beyond the cap shares the overflow bucket and is
// always verified: only a failure is answered with the bucket's wait.
// verify runs under the throttle's lock, so concurrent guesses from one
// address cannot all pass before the first failure counts.
func (t *Throttle) Check(addr string, now time.Time, verify func() bool) (ok bool, wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lim := t.m[addr]
	overflow := lim == nil && len(t.m) >= throttleMaxAddrs
	if overflow {
		addr, lim = overflowAddr, t.m[overflowAddr]
	}
	if lim != nil && !overflow {
		if wait := t.waitAt(lim, now); wait > 0 {
			return false, wait
		}
	}
	if verify() {
		return true, 0
	}
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(t.perSecond), t.burst)
		t.m[addr] = lim
	}
	if overflow {
		if wait := t.waitAt(lim, now); wait > 0 {
			return false, wait
		}
	}
	lim.AllowN(now, 1)
	t.sweep(now)
	return false, 0
}

// waitAt is how long until lim has a failure to spend again at now; 0 when
// it has one.
func (t *Throttle) waitAt(lim *rate.Limiter, now time.Time) time.Duration {
	if tokens := lim.TokensAt(now); tokens < 1 {
		return time.Duration(math.Ceil((1 - tokens) / t.perSecond * float64(time.Second)))
	}
	return 0
}

// sweep drops, at most once per throttleSweep, the buckets that are full
// again: their addresses have not failed for a while.
func (t *Throttle) sweep(now time.Time) {
	if now.Sub(t.swept) < throttleSweep {
		return
	}
	t.swept = now
	for addr, lim := range t.m {
		if lim.TokensAt(now) >= float64(t.burst) {
			delete(t.m, addr)
		}
	}
}
