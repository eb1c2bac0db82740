package manage

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"lookout/internal/ratelimit"
)

// Management rate limit: 60 requests per minute per key, as a
// token bucket of 60 refilled at one per second. Requests without a valid
// key are limited the same way per client address, so every response
// carries the headers and guessing keys is slow.
const ratePerMinute = 60

var managementRate = ratelimit.Rate{PerSecond: ratePerMinute / 60.0, Burst: ratePerMinute}

// The caps of the two maps: keys exist in the state (a flood of them is
// the operator's doing), addresses come from anyone.
const (
	maxKeyBuckets  = 100_000
	maxAddrBuckets = ratelimit.DefaultMaxKeys
)

// limiters are the buckets of valid keys and those of the addresses of
// requests without one, apart: addresses cannot fill the map the keys'
// buckets live in (at the cap newcomers share one bucket,
// ratelimit.Buckets).
type limiters struct {
	keys, addrs *ratelimit.Buckets
}

func newLimiters(met *ratelimit.Metrics) *limiters {
	return &limiters{
		keys:  ratelimit.New(ratelimit.Options{Name: "management_key", MaxKeys: maxKeyBuckets, Metrics: met}),
		addrs: ratelimit.New(ratelimit.Options{Name: "management_address", MaxKeys: maxAddrBuckets, Metrics: met}),
	}
}

// take spends one token of b's bucket id at now and sets the X-RateLimit
// headers; false means the request is over the limit (and Retry-After is
// set).
func take(w http.ResponseWriter, b *ratelimit.Buckets, id string, now time.Time) bool {
	res := b.Take(id, managementRate, now)
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(ratePerMinute))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(0, int(math.Floor(res.Remaining)))))
	// Reset: seconds until the bucket is full again.
	h.Set("X-RateLimit-Reset", strconv.Itoa(int(math.Ceil(res.Full.Seconds()))))
	if !res.OK {
		h.Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(res.Wait.Seconds())))))
	}
	return res.OK
}
