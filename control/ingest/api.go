// Package ingest is the Ingest API of a control node: POST /ping and
// GET /ping/{monitor}, which receive events (pings), and GET /health.
//
// A ping is authenticated against this node's copy of the state (the key's
// hash; a key this node does not hold is checked with the leader before it
// is refused), rate limited per ingest key, validated, and
// handed to the Batcher, which proposes many events as one raft entry (group
// commit). The answer is written once that entry is committed and applied,
// from the state machine's result for the event, so every node answers a
// ping alike.
package ingest

import (
	"context"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/keyauth"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/metrics"
	"lookout/internal/pingwire"
	"lookout/internal/ratelimit"
)

// Applier is what the Batcher needs of the raft cluster.
type Applier interface {
	// Apply proposes cmd (on the leader, forwarded if need be) and returns
	// the state machine's result once it is committed and applied.
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
}

// Cluster is what the Ingest API needs of the raft cluster.
type Cluster interface {
	Applier
	// ConsistentRead returns once the local state reflects every
	// acknowledged write; a key this node does not hold is looked up again
	// after it.
	ConsistentRead(ctx context.Context) error
}

// State is what the Ingest API reads of this node's copy of the replicated
// state. Every read is local.
type State interface {
	// KeyByHash returns the key whose secret hashes to hash, or an error
	// wrapping state.ErrNotFound.
	KeyByHash(hash []byte) (*raftv1.Key, error)
	// Account returns the account with id, or an error wrapping
	// state.ErrNotFound.
	Account(id string) (*statev1.Account, error)
	// QuotaStatus is the account's monthly quota as of nowMs.
	QuotaStatus(accountID string, nowMs int64) (*raftv1.QuotaStatus, error)
}

// Options configures the Ingest API. Health alone serves /health; the ping
// endpoints are registered only when Cluster and State are set too.
type Options struct {
	// Health answers /health.
	Health Health
	// Cluster applies the batches of events.
	Cluster Cluster
	// State is the local copy of the replicated state.
	State State
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Now defaults to time.Now. It stamps received_unix_ms, drives the rate
	// limiter and the X-Quota-Reset-In header.
	Now func() time.Time
	// RetentionCount is how many events are kept per monitor, stamped into
	// every IngestBatch so that every node trims alike.
	RetentionCount int64
	// RetentionAge is the event retention age: an event whose timestamp is
	// older than this is refused (400). Zero: no lower bound.
	RetentionAge time.Duration
	// KeyCheckTimeout bounds the check of an unknown key with the leader
	// (default keyauth.DefaultCheckTimeout); past it the ping is answered
	// 503.
	KeyCheckTimeout time.Duration
	// Batch tunes the group commit; zero fields take the defaults.
	Batch BatchSettings
	// LimiterIdle is how often the keys' full rate-limit buckets are
	// dropped (default 10 minutes).
	LimiterIdle time.Duration
	// Limits counts the keys' rate-limit buckets (nil: none).
	Limits *ratelimit.Metrics
	// Metrics counts the answered pings and the batches (nil: none).
	Metrics *metrics.Ingest
}

// API serves the Ingest API.
type API struct {
	health    Health
	cluster   Cluster
	state     State
	keys      *keyauth.Keys
	log       hclog.Logger
	now       func() time.Time
	retention time.Duration
	batcher   *Batcher
	limits    *pingwire.Limiters
	metrics   *metrics.Ingest
}

// New makes the Ingest API. Start must be called before pings are
// accepted (until then, and after Stop, they are answered 503).
func New(o Options) *API {
	a := &API{health: o.Health, cluster: o.Cluster, state: o.State, log: o.Logger, now: o.Now, retention: o.RetentionAge, metrics: o.Metrics}
	a.keys = keyauth.New(o.State, o.Cluster, o.KeyCheckTimeout)
	if a.log == nil {
		a.log = hclog.NewNullLogger()
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.batcher = NewBatcher(BatcherOptions{
		Cluster:        o.Cluster,
		RetentionCount: o.RetentionCount,
		Logger:         a.log.Named("batcher"),
		BatchSettings:  o.Batch,
		Metrics:        o.Metrics,
	})
	a.limits = pingwire.NewLimiters(pingwire.LimiterOptions{Idle: o.LimiterIdle, Metrics: o.Limits})
	return a
}

// Register adds the API's routes to mux: /health, and the ping endpoints
// when the API has a Cluster and a State.
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /health", a.handleHealth)
	if a.state == nil || a.cluster == nil {
		return
	}
	mux.HandleFunc("POST /ping", a.handlePost)
	mux.HandleFunc("GET /ping/{monitor}", a.handleGet)
	// Everything else under /ping answers JSON too: 405 for a wrong method,
	// 404 for a path that is no endpoint. GET /ping/ is a ping without a
	// monitor (400 once authenticated).
	mux.HandleFunc("/ping", a.handleOther)
	mux.HandleFunc("/ping/", a.handleOther)
}

// Start starts the batcher; pings are accepted from now on.
func (a *API) Start() { a.batcher.Start() }

// Stop stops the batcher: pings waiting for a batch, and pings that arrive
// later, are answered 503. Stop the HTTP server first so that no request
// is cut off.
func (a *API) Stop() { a.batcher.Stop() }

// Stats returns the batcher's counters.
func (a *API) Stats() BatcherStats { return a.batcher.Stats() }

// handleOther answers requests under /ping that match no endpoint.
func (a *API) handleOther(w http.ResponseWriter, r *http.Request) {
	pingwire.HandleOther(w, r, a.handleGet)
}
