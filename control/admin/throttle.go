package admin

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// Wrong operator tokens are throttled per client address
// (ratelimit.Throttle): each address may send authFailureBurst wrong
// tokens, refilled at authFailureRate a second; past that its wrong tokens
// and its requests without one are answered 429 until its bucket refills.
// The right token always passes.
const (
	authFailureBurst = 10
	authFailureRate  = 1.0
)

const codeRateLimited = "rate_limited"

// writeThrottled answers 429 with Retry-After (whole seconds, at least 1).
func writeThrottled(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	writeError(w, http.StatusTooManyRequests, codeRateLimited, "too many wrong operator tokens from this address; try again later")
}
