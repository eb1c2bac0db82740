package public

import (
	"sync"
	"time"
)

// answer is a rendered answer, kept by the cache.
type answer struct {
	status      int
	contentType string
	body        []byte
}

// entry is a cached answer, good until expires while the state's public
// generation is still gen.
type entry struct {
	answer
	gen     uint64
	expires time.Time
}

// cache keeps rendered answers by request path for a few seconds, so a
// popular status page or badge costs one state read per node per TTL. An
// answer is dropped when it expires or when a badge key or a status page
// changed on this node (State.PublicGeneration moved): a regenerated key,
// a disabled page, is never served from the cache once applied. Monitors'
// own changes show within the TTL. At most max entries: when full, the
// expired go, and if that is not enough every entry goes (the answers are
// cheap to make again; a flood of unknown paths only costs itself).
type cache struct {
	ttl time.Duration
	max int

	mu sync.Mutex
	m  map[string]entry
}

func newCache(ttl time.Duration, max int) *cache {
	return &cache{ttl: ttl, max: max, m: map[string]entry{}}
}

// get returns the answer cached for key at generation gen, now.
func (c *cache) get(key string, gen uint64, now time.Time) (answer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || e.gen != gen || !now.Before(e.expires) {
		return answer{}, false
	}
	return e.answer, true
}

// put caches a for key, made from the state at generation gen.
func (c *cache) put(key string, gen uint64, now time.Time, a answer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k, e := range c.m {
			if e.gen != gen || !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
		if len(c.m) >= c.max {
			clear(c.m)
		}
	}
	c.m[key] = entry{answer: a, gen: gen, expires: now.Add(c.ttl)}
}
