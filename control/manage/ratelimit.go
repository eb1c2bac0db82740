package manage

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Management rate limit (api.md 8): 60 requests per minute per key, as a
// token bucket of 60 refilled at one per second. Requests without a valid
// key are limited the same way per client address, so every response
// carries the headers and guessing keys is slow.
const (
	ratePerMinute = 60
	limiterIdle   = 10 * time.Minute
)

type limiters struct {
	mu    sync.Mutex
	m     map[string]*limiterEntry
	sweep time.Time
}

type limiterEntry struct {
	l    *rate.Limiter
	used time.Time
}

func newLimiters() *limiters { return &limiters{m: map[string]*limiterEntry{}} }

// take spends one token of id's bucket at now and sets the X-RateLimit
// headers; false means the request is over the limit (and Retry-After is
// set).
func (ls *limiters) take(w http.ResponseWriter, id string, now time.Time) bool {
	ls.mu.Lock()
	e := ls.m[id]
	if e == nil {
		e = &limiterEntry{l: rate.NewLimiter(rate.Limit(ratePerMinute/60.0), ratePerMinute)}
		ls.m[id] = e
	}
	e.used = now
	allowed := e.l.AllowN(now, 1)
	tokens := e.l.TokensAt(now)
	if now.Sub(ls.sweep) > limiterIdle {
		for k, v := range ls.m {
			if now.Sub(v.used) > limiterIdle {
				delete(ls.m, k)
			}
		}
		ls.sweep = now
	}
	ls.mu.Unlock()

	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(ratePerMinute))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(0, int(math.Floor(tokens)))))
	// Reset: seconds until the bucket is full again.
	h.Set("X-RateLimit-Reset", strconv.Itoa(int(math.Ceil(float64(ratePerMinute)-tokens))))
	if !allowed {
		h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(1-tokens)))))
	}
	return allowed
}
