package pingwire

import (
	"math"
	"time"

	"golang.org/x/time/rate"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/ratelimit"
)

// The ingest rate limit of a plan that does not set one.
const (
	defaultRatePerSecond = 10
	defaultBurst         = 20
	defaultLimiterIdle   = 10 * time.Minute
)

// Limiters holds one token bucket per ingest key, sized by the plan of the
// key's account. The limit is per node: the buckets are not shared between
// control nodes, so a client that spreads its pings over N nodes (a load
// balancer in front of the cluster does) gets up to N times its plan's rate.
// Sharing them would cost a raft round trip or gossip per ping; the limit
// is there to protect each node, and each node enforces it for itself.
//
// Memory stays bounded (ratelimit.Buckets): a bucket exists only for a key
// that authenticated, a bucket full again is dropped every Idle (a full
// bucket is the same as a new one, so nothing is lost), and at most
// MaxKeys keys have one; beyond that (more keys pinging at once than the
// cap) the newcomers share one bucket.
type Limiters struct {
	b *ratelimit.Buckets
}

// LimiterOptions configures Limiters; a zero field takes its default.
type LimiterOptions struct {
	// Idle is how often full buckets are dropped (default 10 minutes).
	Idle time.Duration
	// MaxKeys caps the keys with a bucket of their own (default 100,000).
	MaxKeys int
	// Metrics counts as the "ingest_key" limiter.
	Metrics *ratelimit.Metrics
}

// DefaultLimiterKeys is the default of LimiterOptions.MaxKeys.
const DefaultLimiterKeys = 100_000

// NewLimiters makes an empty set of buckets.
func NewLimiters(o LimiterOptions) *Limiters {
	if o.Idle <= 0 {
		o.Idle = defaultLimiterIdle
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultLimiterKeys
	}
	return &Limiters{b: ratelimit.New(ratelimit.Options{Name: "ingest_key", MaxKeys: o.MaxKeys, SweepEvery: o.Idle, Metrics: o.Metrics})}
}

// PlanRate returns the rate and burst of plan, with the defaults for values
// that are not set.
func PlanRate(plan *raftv1.Plan) (rate.Limit, int) {
	r := plan.GetIngestRatePerSecond()
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		r = defaultRatePerSecond
	}
	b := plan.GetIngestBurst()
	if b <= 0 {
		b = defaultBurst
	}
	if b > math.MaxInt32 {
		b = math.MaxInt32
	}
	return rate.Limit(r), int(b)
}

// Allow takes a token from keyID's bucket at now. When there is none it
// returns false and how long until there is. A changed plan keeps the
// bucket's tokens and changes its rate and size.
func (l *Limiters) Allow(keyID string, plan *raftv1.Plan, now time.Time) (bool, time.Duration) {
	limit, burst := PlanRate(plan)
	res := l.b.Take(keyID, ratelimit.Rate{PerSecond: float64(limit), Burst: burst}, now)
	return res.OK, res.Wait
}

// Size is the number of buckets held.
func (l *Limiters) Size() int { return l.b.Len() }

// RetryAfter is the Retry-After value for a wait of d: whole seconds,
// rounded up, at least 1.
func RetryAfter(d time.Duration) int64 {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
