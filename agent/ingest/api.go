// Package ingest is the edge agent's local Ingest API on --http-addr:
// POST /ping, GET|HEAD /ping/{monitor} and GET /health, with the control
// plane's Ingest API (docs/api.md, "On an edge agent"). It shares
// internal/pingwire with control/ingest, so the same request gets the same
// 400, 401 and 429 answers from both.
//
// A ping is authenticated against the ingest-key hashes the control plane
// assigned to the agent (KeyStore), rate limited per key with the key's
// plan, validated, completed (account, key, receipt time, an event_id when
// it has none) and appended to the disk buffer (Sink). It is answered
// 200 {"status":"success"} only once the append returned, that is once the
// event is fsynced; 503 {"error":"buffer_full"} when the buffer is full,
// 503 {"error":"buffer_unavailable"} when it cannot store anything (its
// directory was removed, its disk failed).
// Whether the control plane stores it (monitor limits, quota) is decided
// when the buffer is forwarded.
package ingest

import (
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"lookout/agent/buffer"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingwire"
	"lookout/internal/ratelimit"
)

// KeyStore holds the ingest keys the agent may accept.
type KeyStore interface {
	// KeyByHash returns the key whose secret hashes to hash
	// (apikey.Hash).
	KeyByHash(hash []byte) (*agentv1.IngestKey, bool)
}

// Sink takes accepted events: the buffer. AppendEvent returns nil once the
// event is durable, and an error wrapping buffer.ErrFull when there is no
// room.
type Sink interface {
	AppendEvent(ev *raftv1.Event) error
}

// Quotas knows the last quota status the control plane reported per
// account.
type Quotas interface {
	// Last returns the account's last known quota, nil when none.
	Last(accountID string) *raftv1.QuotaStatus
}

// Link is the agent's link to the control plane, as /health shows it.
type Link struct {
	// Connected tells whether the agent holds an assignment stream now.
	Connected bool `json:"connected"`
	// Control is the control-node URL in use (or last used).
	Control string `json:"control,omitempty"`
	// Region is the agent's region.
	Region string `json:"region,omitempty"`
	// LastContactUnixMs is when the control plane last answered, 0 never.
	LastContactUnixMs int64 `json:"last_contact_unix_ms,omitempty"`
}

// Gossip is the agent's region pool, as /health shows it.
type Gossip struct {
	// State is off (no --gossip-addr: a region of one), waiting_for_key
	// (the agent never received its region's gossip key from the control
	// plane, so it does not gossip yet) or on.
	State string `json:"state"`
	// Members counts the region's live agents this agent sees, itself
	// included.
	Members int `json:"members"`
}

// Options configures the local Ingest API.
type Options struct {
	// Keys are the ingest keys the agent accepts (required).
	Keys KeyStore
	// Sink is where accepted events go (required).
	Sink Sink
	// Quotas gives the X-Quota-* headers; nil: none are sent.
	Quotas Quotas
	// Stats reports the buffer for /health; nil: not shown.
	Stats func() buffer.Stats
	// Health tells why the buffer cannot store pings now (nil: it can):
	// /health then answers 503 with the reason. Nil: always healthy.
	Health func() error
	// Link reports the link for /health; nil: not shown.
	Link func() Link
	// Gossip reports the region pool for /health; nil: not shown.
	Gossip func() Gossip
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Now defaults to time.Now.
	Now func() time.Time
	// RetentionAge refuses events whose timestamp is older (400), as the
	// control plane does; 0: no lower bound.
	RetentionAge time.Duration
	// LimiterIdle is how often the keys' full rate-limit buckets are
	// dropped (default 10 minutes).
	LimiterIdle time.Duration
	// Registerer, when set, gets the API's metrics.
	Registerer prometheus.Registerer
}

// API serves the agent's local Ingest API.
type API struct {
	keys      KeyStore
	sink      Sink
	quotas    Quotas
	stats     func() buffer.Stats
	health    func() error
	link      func() Link
	gossip    func() Gossip
	log       hclog.Logger
	now       func() time.Time
	retention time.Duration
	limits    *pingwire.Limiters
	events    *prometheus.CounterVec
}

// New makes the local Ingest API.
func New(o Options) *API {
	a := &API{keys: o.Keys, sink: o.Sink, quotas: o.Quotas, stats: o.Stats, health: o.Health, link: o.Link, gossip: o.Gossip,
		log: o.Logger, now: o.Now, retention: o.RetentionAge}
	if a.log == nil {
		a.log = hclog.NewNullLogger()
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lookout", Subsystem: "agent_ingest", Name: "events_total",
		Help: "Pings answered by the agent's local Ingest API, by outcome: buffered, invalid, unauthorized, rate_limited, buffer_full, buffer_unavailable, unavailable, error.",
	}, []string{"outcome"})
	var limitMetrics *ratelimit.Metrics
	if o.Registerer != nil {
		o.Registerer.MustRegister(a.events)
		limitMetrics = ratelimit.NewMetrics(o.Registerer)
	}
	a.limits = pingwire.NewLimiters(pingwire.LimiterOptions{Idle: o.LimiterIdle, Metrics: limitMetrics})
	return a
}

// Register adds the API's routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /health", a.handleHealth)
	mux.HandleFunc("POST /ping", a.handlePost)
	mux.HandleFunc("GET /ping/{monitor}", a.handleGet)
	// Everything else under /ping answers JSON too, as on a control node.
	mux.HandleFunc("/ping", a.handleOther)
	mux.HandleFunc("/ping/", a.handleOther)
}

// Handler returns a mux serving the API alone.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	a.Register(mux)
	return mux
}

// handleOther answers requests under /ping that match no endpoint.
func (a *API) handleOther(w http.ResponseWriter, r *http.Request) {
	pingwire.HandleOther(w, r, a.handleGet)
}

// health is the body of GET /health.
type health struct {
	// Status is "ok", or "unavailable" when the buffer cannot store pings
	// (Error says why).
	Status string       `json:"status"`
	Error  string       `json:"error,omitempty"`
	Link   *Link        `json:"link,omitempty"`
	Gossip *Gossip      `json:"gossip,omitempty"`
	Buffer *bufferState `json:"buffer,omitempty"`
}

// bufferState is the buffer as /health shows it.
type bufferState struct {
	Events         int64  `json:"events"`
	Results        int64  `json:"results"`
	Bytes          int64  `json:"bytes"`
	MaxBytes       int64  `json:"max_bytes"`
	OldestUnixMs   int64  `json:"oldest_unix_ms,omitempty"`
	DroppedResults uint64 `json:"dropped_results"`
	RefusedEvents  uint64 `json:"refused_events"`
}

// handleHealth answers 200 with the link, the region pool and the
// buffer: the agent accepts pings whether or not it reaches the control
// plane. It answers 503, with the reason, while the buffer cannot store
// pings (they are refused). It needs no key.
func (a *API) handleHealth(w http.ResponseWriter, r *http.Request) {
	h, code := health{Status: "ok"}, http.StatusOK
	if a.health != nil {
		if err := a.health(); err != nil {
			h.Status, h.Error, code = "unavailable", err.Error(), http.StatusServiceUnavailable
		}
	}
	if a.link != nil {
		l := a.link()
		h.Link = &l
	}
	if a.gossip != nil {
		g := a.gossip()
		h.Gossip = &g
	}
	if a.stats != nil {
		s := a.stats()
		h.Buffer = &bufferState{Events: s.Events, Results: s.Results, Bytes: s.Bytes, MaxBytes: s.MaxBytes,
			OldestUnixMs: s.OldestUnixMs, DroppedResults: s.DroppedResults, RefusedEvents: s.RefusedFull}
	}
	pingwire.WriteJSON(w, code, h)
}
