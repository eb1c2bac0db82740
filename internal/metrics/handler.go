package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lookout/internal/clientaddr"
	"lookout/internal/ratelimit"
)

// Wrong metrics tokens are throttled per client address as wrong operator
// tokens are: 10 in a row, then one a second.
const (
	tokenFailureBurst = 10
	tokenFailureRate  = 1.0
)

// HandlerOptions configures Handler.
type HandlerOptions struct {
	// Token, when set, is the bearer token a scrape must send.
	Token string
	// Limits counts the wrong-token throttle's buckets (nil: none).
	Limits *ratelimit.Metrics
	// Now defaults to time.Now.
	Now func() time.Time
}

// Handler serves the metrics of g in Prometheus' exposition formats
// (promhttp). With a token, a scrape must send
// "Authorization: Bearer <token>" and is answered 401 otherwise. The
// token is compared in constant time before anything is counted, so the
// right one always passes; wrong ones are counted per client address
// (clientaddr.Key) and past 10 in a row (one more a second) answered 429
// with Retry-After, as are requests without a token from that address.
func Handler(g prometheus.Gatherer, o HandlerOptions) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
	if o.Token == "" {
		return h
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	want := sha256.Sum256([]byte(o.Token))
	throttle := ratelimit.NewThrottle(ratelimit.ThrottleOptions{Name: "metrics_token", Burst: tokenFailureBurst, PerSecond: tokenFailureRate, Metrics: o.Limits})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(given))
		if ok && subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		addr, now := clientaddr.Key(r), o.Now()
		wait := throttle.Wait(addr, now)
		if ok && given != "" {
			wait = throttle.Fail(addr, now)
		}
		w.Header().Set("Content-Type", "application/json")
		if wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":"too many wrong tokens from this address; try again later"}` + "\n"))
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"unauthorized"}` + "\n"))
	})
}
