package assign

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/agent/link"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
)

// DefaultIdleTimeout is how long the stream may stay silent before the
// agent drops it and reconnects: the control plane sends a keepalive at
// least every 15 s.
const DefaultIdleTimeout = 45 * time.Second

// ErrWrongRegion is wrapped by Run's error when the token's region is not
// the agent's --region.
var ErrWrongRegion = errors.New("the agent token is for another region")

// ErrIdentityRefused is wrapped by Run's error when the control plane
// refused the stream as malformed (link.ErrInvalid): the agent's identity
// (its id file, its --name) is not one the control plane records, and
// asking again changes nothing.
var ErrIdentityRefused = errors.New("the control plane refused this agent's identity")

// Opener opens the assignments stream (*link.Client).
type Opener interface {
	Assignments(ctx context.Context, req *agentv1.AssignmentsRequest) (*link.Stream, error)
	Lost(err error)
}

// Gossip is told the region's gossip key and the agent's token id each
// time the stream names them (*region.Pool).
type Gossip interface {
	SetKey(key []byte, tokenID string) error
}

// WatcherOptions configures a Watcher.
type WatcherOptions struct {
	Link  Opener
	Store *Store
	// Gossip, if set, gets the gossip key of every stream.
	Gossip Gossip
	// Region is the agent's --region; a stream naming another region is
	// an error that stops Run ("" accepts any).
	Region string
	// IdleTimeout: see DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Backoff between failed rounds (default 500 ms to 30 s); Revoked is
	// the wait after the token was refused (default 30 s).
	Backoff link.Backoff
	Revoked time.Duration
	Logger  hclog.Logger
}

// Watcher keeps the Store in step with the control plane's stream.
type Watcher struct {
	o WatcherOptions
}

// NewWatcher makes a watcher.
func NewWatcher(o WatcherOptions) *Watcher {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Backoff.Min <= 0 {
		o.Backoff = link.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second}
	}
	if o.Revoked <= 0 {
		o.Revoked = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return &Watcher{o: o}
}

// Run follows the stream until ctx ends: it opens it with what the store
// holds, applies every message, and on any failure reconnects (the next
// URL, after a backoff). It returns nil when ctx ends, or an error
// wrapping ErrWrongRegion or ErrIdentityRefused.
func (w *Watcher) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		synced, err := w.once(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrWrongRegion) {
			return err
		}
		if errors.Is(err, link.ErrInvalid) {
			return fmt.Errorf("%w: %w", ErrIdentityRefused, err)
		}
		if synced {
			w.o.Backoff.Reset()
		}
		wait := w.o.Backoff.Next()
		if link.IsUnauthenticated(err) {
			wait = w.o.Revoked
		}
		w.o.Logger.Debug("assignments stream ended; reconnecting", "in", wait, "error", err)
		link.Sleep(ctx.Done(), wait)
	}
	return nil
}

// once runs one stream; synced reports whether it got as far as a synced
// message.
func (w *Watcher) once(ctx context.Context) (synced bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	checks, keys := w.o.Store.Held()
	st, err := w.o.Link.Assignments(sctx, &agentv1.AssignmentsRequest{Checks: checks, Keys: keys})
	if err != nil {
		return false, err
	}
	defer st.Close()
	// A silent stream (a vanished node, a cut link) is dropped.
	idle := time.AfterFunc(w.o.IdleTimeout, cancel)
	defer idle.Stop()
	for first := true; first || st.Receive(); first = false {
		idle.Reset(w.o.IdleTimeout)
		m := st.Msg()
		if r := m.GetRegion(); r != "" && w.o.Region != "" && r != w.o.Region {
			return synced, fmt.Errorf("%w: the token is for region %q, the agent runs with --region %q", ErrWrongRegion, r, w.o.Region)
		}
		// The key and this agent's token first: the runner asks the pool
		// whether it may run a check as soon as the check is applied, and
		// a check that names the token must find it known.
		if k := m.GetGossipKey(); len(k) > 0 && w.o.Gossip != nil {
			if err := w.o.Gossip.SetKey(k, m.GetTokenId()); err != nil {
				w.o.Logger.Error("the region's gossip key from the control plane cannot be used", "error", err)
			}
		}
		if _, err := w.o.Store.Apply(m); err != nil {
			w.o.Logger.Error("the assignments could not be saved; they apply in memory and are saved with the next change", "error", err)
		}
		if m.GetSynced() && !synced {
			synced = true
			nc, nk := w.o.Store.Counts()
			w.o.Logger.Info("assignments synced", "checks", nc, "keys", nk, "region", w.o.Store.Region())
		}
	}
	err = st.Err()
	if err == nil {
		err = errors.New("the control node ended the assignments stream")
	}
	if sctx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("the assignments stream was silent for %s: %w", w.o.IdleTimeout, err)
	}
	if ctx.Err() == nil {
		w.o.Link.Lost(err)
	}
	return synced, err
}
