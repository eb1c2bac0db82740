// Package public serves what anyone may read without a session: badges of
// monitors and tags (/badge/{badge key}/..., SVG and JSON) and an account's
// status page (/status/{slug}, HTML). It shows the state of the monitors it
// is asked about, their names and uptime, and nothing else of the account.
//
// Answers are cached per node by path for a few seconds (cache.go), so a
// popular page costs little, and rate limited per client address
// (internal/ratelimit over internal/clientaddr, which honours
// --trusted-proxies). It reads the node's copy of the state (no consistent
// read: a public page a moment behind is fine) and never writes.
package public

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/internal/clientaddr"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/ratelimit"
)

// State is what the public pages read of the node's copy of the state.
type State interface {
	AccountByBadgeKey(key string) (*statev1.Account, error)
	MonitorByName(accountID, kind, name string) (*statev1.Monitor, error)
	Monitors(accountID string) ([]*statev1.Monitor, error)
	CheckStatus(checkUUID string) (*statev1.CheckStatus, error)
	// UnknownSince is when m became unknown (its agent region offline);
	// 0 when it is not.
	UnknownSince(m *statev1.Monitor) (int64, error)
	StatusPageBySlug(slug string) (string, *statev1.StatusPage, error)
	Uptimes(ids []string) (map[string]*statev1.Uptime, error)
	// PublicGeneration moves whenever a badge key or a status page
	// changed; reading it costs no database read.
	PublicGeneration() uint64
}

// The defaults of Options.
const (
	DefaultCacheTTL  = 10 * time.Second
	DefaultMaxCached = 10_000
)

// rate is each client address's budget: a burst of 120 requests (a page
// with many badges, a status page reloaded), then two a second.
var rate = ratelimit.Rate{PerSecond: 2, Burst: 120}

// maxAge is the Cache-Control max-age of a public answer, in seconds.
const maxAge = 30

// Options configures the public pages.
type Options struct {
	State State
	// CacheTTL is how long an answer is served from the cache (default
	// DefaultCacheTTL); MaxCached bounds the answers kept.
	CacheTTL  time.Duration
	MaxCached int
	// Limits counts the rate limit's buckets (nil: none).
	Limits *ratelimit.Metrics
	// Logger defaults to a null logger; Now to time.Now.
	Logger hclog.Logger
	Now    func() time.Time
}

// Public serves badges and status pages.
type Public struct {
	state State
	log   hclog.Logger
	now   func() time.Time
	cache *cache
	addrs *ratelimit.Buckets
	pages *pages
}

// New returns the public pages.
func New(o Options) (*Public, error) {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	if o.MaxCached <= 0 {
		o.MaxCached = DefaultMaxCached
	}
	pg, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Public{
		state: o.State, log: o.Logger, now: o.Now, pages: pg,
		cache: newCache(o.CacheTTL, o.MaxCached),
		addrs: ratelimit.New(ratelimit.Options{Name: "public_address", Metrics: o.Limits}),
	}, nil
}

// Register adds the routes to mux.
func (p *Public) Register(mux *http.ServeMux) {
	mux.Handle("GET /badge/{key}/{kind}/{file...}", p.serve(p.badge))
	mux.Handle("GET /status/{slug}", p.serve(p.statusPage))
}

// serve wraps a page: the rate limit, then the cache, then render (which
// reads the state) on a miss. Only what render answers is cached.
func (p *Public) serve(render func(r *http.Request, nowMs int64) answer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := p.now()
		if res := p.addrs.Take(clientaddr.Key(r), rate, now); !res.OK {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(res.Wait.Seconds())))))
			http.Error(w, "too many requests", http.StatusTooManyRequests)
			return
		}
		key := r.URL.EscapedPath()
		gen := p.state.PublicGeneration() // before the read: a change during it invalidates
		a, ok := p.cache.get(key, gen, now)
		if !ok {
			a = render(r, now.UnixMilli())
			if a.status != http.StatusInternalServerError {
				p.cache.put(key, gen, now, a)
			}
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		if a.status == http.StatusOK {
			h.Set("Cache-Control", "public, max-age="+strconv.Itoa(maxAge))
		} else {
			h.Set("Cache-Control", "no-store")
		}
		if a.contentType == contentHTML {
			h.Set("Content-Security-Policy", p.pages.csp)
			h.Set("Referrer-Policy", "no-referrer")
		}
		w.WriteHeader(a.status)
		w.Write(a.body)
	})
}

// Content types of the answers.
const (
	contentSVG  = "image/svg+xml; charset=utf-8"
	contentJSON = "application/json"
	contentHTML = "text/html; charset=utf-8"
	contentText = "text/plain; charset=utf-8"
)

// notFound is the answer for anything unknown: a key, a kind, a monitor,
// a tag, a slug, a disabled page. They are not told apart.
func notFound(contentType string) answer {
	switch contentType {
	case contentJSON:
		return answer{status: http.StatusNotFound, contentType: contentJSON, body: []byte(`{"error":"not found"}` + "\n")}
	case contentHTML:
		return answer{status: http.StatusNotFound, contentType: contentHTML, body: []byte(notFoundHTML)}
	}
	return answer{status: http.StatusNotFound, contentType: contentText, body: []byte("not found\n")}
}

const notFoundHTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Not found</title></head><body><p>Not found.</p></body></html>` + "\n"

// internal logs err and answers 500 (not cached).
func (p *Public) internal(what string, err error) answer {
	p.log.Error("public page failed", "page", what, "error", err)
	return answer{status: http.StatusInternalServerError, contentType: contentText, body: []byte("internal error\n")}
}
