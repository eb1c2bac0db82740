package admin

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Wrong operator tokens are throttled per client address: each address has
// a token bucket of authFailureBurst failures, refilled at authFailureRate
// a second. While its bucket is empty every request from the address is
// answered 429, even one with the right token: checking the token then
// would tell a guesser when it is right. So a good token works again at
// most a second after its address stopped sending wrong ones.
//
// The addresses beyond throttleMaxAddrs share the overflow bucket, which
// only answers wrong tokens with 429: its token is always checked, so an
// attacker filling the table cannot lock out the operator's right token.
const (
	authFailureBurst = 10
	authFailureRate  = 1.0
	// throttleMaxAddrs bounds the addresses tracked; beyond it (an attack
	// from very many addresses) the new ones share one bucket.
	throttleMaxAddrs = 10_000
	// throttleSweep is how often buckets that have refilled are dropped.
	throttleSweep = time.Minute
	// overflowAddr is the shared bucket of the addresses beyond the cap.
	overflowAddr = "*"
)

const codeRateLimited = "rate_limited"

// throttle counts failed authentications per client address.
type throttle struct {
	mu    sync.Mutex
	m     map[string]*rate.Limiter
	swept time.Time
}

func newThrottle() *throttle { return &throttle{m: map[string]*rate.Limiter{}} }

// check decides a request from addr at now: while addr is throttled it
// returns false and how long to wait, without calling verify; otherwise it
// returns verify's answer, and a failed verify spends one of addr's
// failures. An address beyond the cap shares the overflow bucket and is
// always verified: only a failure is answered with the bucket's wait. verify runs under the throttle's lock, so concurrent guesses
// from one address cannot all pass before the first failure counts.
func (t *throttle) check(addr string, now time.Time, verify func() bool) (ok bool, wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lim := t.m[addr]
	overflow := lim == nil && len(t.m) >= throttleMaxAddrs
	if overflow {
		addr, lim = overflowAddr, t.m[overflowAddr]
	}
	if lim != nil && !overflow {
		if wait := waitAt(lim, now); wait > 0 {
			return false, wait
		}
	}
	if verify() {
		return true, 0
	}
	if lim == nil {
		lim = rate.NewLimiter(authFailureRate, authFailureBurst)
		t.m[addr] = lim
	}
	if overflow {
		if wait := waitAt(lim, now); wait > 0 {
			return false, wait
		}
	}
	lim.AllowN(now, 1)
	t.sweep(now)
	return false, 0
}

// waitAt is how long until lim has a failure to spend again at now; 0 when
// it has one.
func waitAt(lim *rate.Limiter, now time.Time) time.Duration {
	if tokens := lim.TokensAt(now); tokens < 1 {
		return time.Duration(math.Ceil((1 - tokens) / authFailureRate * float64(time.Second)))
	}
	return 0
}

// sweep drops, at most once per throttleSweep, the buckets that are full
// again: their addresses have not failed for a while.
func (t *throttle) sweep(now time.Time) {
	if now.Sub(t.swept) < throttleSweep {
		return
	}
	t.swept = now
	for addr, lim := range t.m {
		if lim.TokensAt(now) >= authFailureBurst {
			delete(t.m, addr)
		}
	}
}

// writeThrottled answers 429 with Retry-After (whole seconds, at least 1).
func writeThrottled(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	writeError(w, http.StatusTooManyRequests, codeRateLimited, "too many wrong operator tokens from this address; try again later")
}
