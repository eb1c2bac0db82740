package ingest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"lookout/cluster/clusterapi"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/metrics"
)

// The defaults of BatchSettings.
const (
	DefaultMaxBatch     = 256
	DefaultMaxBytes     = 512 << 10
	DefaultMaxDelay     = time.Millisecond
	DefaultMaxInFlight  = 4
	DefaultApplyTimeout = 10 * time.Second
)

// BatchSettings tunes the group commit. Zero fields take the defaults.
type BatchSettings struct {
	// MaxBatch is the most events in one batch, at most
	// state.IngestBatchMaxEvents (the state machine refuses larger ones).
	MaxBatch int
	// MaxBytes bounds a batch's events by their encoded size. An event
	// larger than MaxBytes on its own goes in a batch alone.
	MaxBytes int
	// MaxDelay is how long a batch waits for more events after its first.
	MaxDelay time.Duration
	// MaxInFlight is how many batches may be applying at once; while all
	// are busy the next batch keeps filling up to its limits.
	MaxInFlight int
	// ApplyTimeout bounds one batch's Apply (the cluster itself waits up to
	// 5 s for a leader).
	ApplyTimeout time.Duration
}

// BatcherOptions configures a Batcher.
type BatcherOptions struct {
	// Cluster applies the batches.
	Cluster Applier
	// RetentionCount is stamped into every IngestBatch.
	RetentionCount int64
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// BatchSettings tunes the group commit.
	BatchSettings
	// Metrics counts the batches and their sizes (nil: none).
	Metrics *metrics.Ingest
}

// BatcherStats are the batcher's counters since it was made.
type BatcherStats struct {
	// Batches is the number of batches proposed.
	Batches uint64
	// Events is the number of events proposed.
	Events uint64
	// Errors is the number of batches whose Apply failed.
	Errors uint64
	// FailedEvents is the number of events answered with an error: those
	// of failed batches and those cut off by Stop.
	FailedEvents uint64
}

// Batcher groups the events submitted by concurrent requests into batches
// and proposes each batch as one IngestBatch command (group commit): one
// goroutine collects events until a batch is full (MaxBatch events or
// MaxBytes) or MaxDelay has passed since its first event, then hands it to
// Cluster.Apply while the next batch fills.
//
// A failed Apply fails every event of its batch with the error; the client
// retries, and its event_id makes the retry safe. A Submit whose context
// ends stops waiting, but its event may still be committed.
type Batcher struct {
	cluster   Applier
	retention int64
	log       hclog.Logger
	s         BatchSettings
	metrics   *metrics.Ingest

	in       chan *waiter
	slots    chan struct{}
	stopping chan struct{}
	ctx      context.Context // cancelled by Stop; the context of every Apply
	cancel   context.CancelFunc
	loopDone chan struct{}
	applies  sync.WaitGroup

	mu      sync.Mutex
	started bool
	stopped bool

	batches, events, errs, failedEvents atomic.Uint64
}

// waiter is one submitted event, or a group of events that must stay
// together in one batch, in order (SubmitGroup), and where its answer goes.
type waiter struct {
	events []*raftv1.Event
	size   int
	done   chan answer // buffered: the batcher never blocks on it
}

type answer struct {
	results []*raftv1.EventResult
	err     error
}

// NewBatcher returns a Batcher; Start starts it.
func NewBatcher(o BatcherOptions) *Batcher {
	s := o.BatchSettings
	if s.MaxBatch <= 0 {
		s.MaxBatch = DefaultMaxBatch
	}
	s.MaxBatch = min(s.MaxBatch, state.IngestBatchMaxEvents)
	if s.MaxBytes <= 0 {
		s.MaxBytes = DefaultMaxBytes
	}
	if s.MaxDelay <= 0 {
		s.MaxDelay = DefaultMaxDelay
	}
	if s.MaxInFlight <= 0 {
		s.MaxInFlight = DefaultMaxInFlight
	}
	if s.ApplyTimeout <= 0 {
		s.ApplyTimeout = DefaultApplyTimeout
	}
	log := o.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Batcher{
		cluster: o.Cluster, retention: o.RetentionCount, log: log, s: s, metrics: o.Metrics,
		in:       make(chan *waiter),
		slots:    make(chan struct{}, s.MaxInFlight),
		stopping: make(chan struct{}),
		ctx:      ctx, cancel: cancel,
		loopDone: make(chan struct{}),
	}
}

// Start starts the collecting goroutine. Calling it again does nothing.
func (b *Batcher) Start() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started || b.stopped {
		return
	}
	b.started = true
	go b.loop()
}

// Stop fails the events not yet proposed with clusterapi.ErrShutdown, cancels
// the batches being applied (their events fail with an error wrapping
// clusterapi.ErrShutdown; they may still be committed) and waits for the
// batcher's goroutines to end. Later Submits fail with clusterapi.ErrShutdown.
func (b *Batcher) Stop() {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	b.stopped = true
	started := b.started
	close(b.stopping)
	b.cancel()
	b.mu.Unlock()
	if started {
		<-b.loopDone
	}
	b.applies.Wait()
}

// Stats returns the counters.
func (b *Batcher) Stats() BatcherStats {
	return BatcherStats{
		Batches: b.batches.Load(), Events: b.events.Load(),
		Errors: b.errs.Load(), FailedEvents: b.failedEvents.Load(),
	}
}

// Submit adds ev to the next batch and waits for its result. It fails with
// clusterapi.ErrShutdown when the batcher is not running, with the batch's
// error when its Apply failed, and with ctx's error when ctx ends first.
func (b *Batcher) Submit(ctx context.Context, ev *raftv1.Event) (*raftv1.EventResult, error) {
	res, err := b.SubmitGroup(ctx, []*raftv1.Event{ev})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// MaxGroup returns the most events, and the most bytes of them (as
// GroupBytes counts), that one SubmitGroup may carry.
func (b *Batcher) MaxGroup() (events, bytes int) { return b.s.MaxBatch, b.s.MaxBytes }

// GroupBytes is the size events take in a batch, as MaxGroup bounds it.
func GroupBytes(events ...*raftv1.Event) int {
	n := 0
	for _, ev := range events {
		n += protowire.SizeTag(1) + protowire.SizeBytes(proto.Size(ev))
	}
	return n
}

// SubmitGroup adds evs to the next batch, together and in order (they are
// applied in one raft entry, one after the other), and waits for their
// results, one per event. A group larger than MaxGroup goes in a batch of
// its own, which the state machine may refuse as too large. Errors are
// Submit's.
func (b *Batcher) SubmitGroup(ctx context.Context, evs []*raftv1.Event) ([]*raftv1.EventResult, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	b.mu.Lock()
	running := b.started && !b.stopped
	b.mu.Unlock()
	if !running {
		return nil, clusterapi.ErrShutdown
	}
	w := &waiter{events: evs, size: GroupBytes(evs...), done: make(chan answer, 1)}
	select {
	case b.in <- w:
	case <-b.stopping:
		return nil, clusterapi.ErrShutdown
	case <-ctx.Done():
		return nil, fmt.Errorf("submit event: %w", ctx.Err())
	}
	select {
	case a := <-w.done:
		return a.results, a.err
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for event result: %w", ctx.Err())
	}
}
