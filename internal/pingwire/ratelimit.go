package pingwire

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
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
// Memory stays bounded: a bucket exists only for a key that authenticated,
// and a bucket idle for longer than idle whose tokens have all come back is
// dropped (a full bucket is the same as a new one, so nothing is lost).
type Limiters struct {
	idle time.Duration

	mu        sync.Mutex
	byKey     map[string]*keyLimiter
	lastSweep time.Time
}

// keyLimiter is one key's bucket and the plan values it was made with.
type keyLimiter struct {
	lim      *rate.Limiter
	limit    rate.Limit
	burst    int
	lastSeen time.Time
}

// NewLimiters makes an empty set of buckets. A bucket idle for idle
// (default 10 minutes) whose tokens have all come back is dropped.
func NewLimiters(idle time.Duration) *Limiters {
	if idle <= 0 {
		idle = defaultLimiterIdle
	}
	return &Limiters{idle: idle, byKey: make(map[string]*keyLimiter)}
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
// returns false and how long until there is.
func (l *Limiters) Allow(keyID string, plan *raftv1.Plan, now time.Time) (bool, time.Duration) {
	limit, burst := PlanRate(plan)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	kl := l.byKey[keyID]
	switch {
	case kl == nil:
		kl = &keyLimiter{lim: rate.NewLimiter(limit, burst), limit: limit, burst: burst}
		l.byKey[keyID] = kl
	case kl.limit != limit || kl.burst != burst:
		// The plan changed: keep the tokens, change the rate and size.
		kl.lim.SetLimitAt(now, limit)
		kl.lim.SetBurstAt(now, burst)
		kl.limit, kl.burst = limit, burst
	}
	kl.lastSeen = now
	res := kl.lim.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Second
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep drops the buckets that are idle and full, at most once per idle
// period. It holds l.mu.
func (l *Limiters) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.idle {
		return
	}
	l.lastSweep = now
	for id, kl := range l.byKey {
		if now.Sub(kl.lastSeen) >= l.idle && kl.lim.TokensAt(now) >= float64(kl.burst) {
			delete(l.byKey, id)
		}
	}
}

// Size is the number of buckets held.
func (l *Limiters) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}

// RetryAfter is the Retry-After value for a wait of d: whole seconds,
// rounded up, at least 1.
func RetryAfter(d time.Duration) int64 {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
