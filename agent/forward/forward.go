// Package forward drains the agent's buffer to the control plane: buffered
// pings through ForwardEvents and check verdicts through
// ReportExecutions, oldest first, in batches. A batch is acknowledged in
// the buffer (and so deleted) only after the control plane answered for
// it; every answer is final, so an item the control plane refused is
// counted and logged, not sent again. A failed call leaves the batch in
// the buffer and is tried again after a backoff (on the next control URL).
// A backlog of events goes over several calls at once, each monitor's
// events in one of them and in order (events.go).
// A heartbeat reports the buffer and the region's members every 5 s.
package forward

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/agent/link"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// EventEntry is a buffered event and its sequence number in the buffer.
type EventEntry struct {
	Seq   uint64
	Event *raftv1.Event
}

// ResultEntry is a buffered verdict and its sequence number.
type ResultEntry struct {
	Seq       uint64
	Execution *raftv1.Execution
}

// BufferStats is what the buffer holds and has counted.
type BufferStats struct {
	Events, Results, Bytes, OldestUnixMs int64
	DroppedResults, RefusedFull          uint64
}

// Buffer is the agent's disk buffer as the forwarder uses it: items in
// order from the oldest, deleted up to a sequence number.
type Buffer interface {
	Events(max, maxBytes int) ([]EventEntry, error)
	AckEvents(upTo uint64) error
	Results(max, maxBytes int) ([]ResultEntry, error)
	AckResults(upTo uint64) error
	Stats() BufferStats
}

// Control is the control plane (*link.Client).
type Control interface {
	ForwardEvents(ctx context.Context, req *agentv1.ForwardEventsRequest) (*agentv1.ForwardEventsResponse, error)
	ReportExecutions(ctx context.Context, req *agentv1.ReportExecutionsRequest) (*agentv1.ReportExecutionsResponse, error)
	Heartbeat(ctx context.Context, req *agentv1.HeartbeatRequest) (*agentv1.HeartbeatResponse, error)
}

// Members lists the region's live agents (*region.Pool).
type Members interface {
	MemberIDs() []string
}

// Metrics counts what was forwarded and refused, by kind ("event" or
// "result"); nil counts nothing.
type Metrics interface {
	Forwarded(kind string, n int)
	Refused(kind, reason string, n int)
}

// The kinds of buffered item, in metrics and logs.
const (
	KindEvent  = "event"
	KindResult = "result"
)

// Options configures the forwarder.
type Options struct {
	Buffer  Buffer
	Control Control
	Members Members
	// Batch and BatchBytes bound one call (default 500 items, 4 MiB).
	Batch, BatchBytes int
	// Lanes is how many ForwardEvents calls may be in flight while a
	// backlog drains (default 8): events.go.
	Lanes int
	// Poll is the wait for new items when the buffer is empty and nobody
	// called Kick (default 250 ms).
	Poll time.Duration
	// Backoff between failed calls (default 500 ms to 30 s); Revoked is
	// the wait after the token was refused (default 30 s).
	Backoff link.Backoff
	Revoked time.Duration
	// HeartbeatEvery is the heartbeat period (default 5 s).
	HeartbeatEvery time.Duration
	Metrics        Metrics
	Logger         hclog.Logger
}

// Stats are the forwarder's counters.
type Stats struct {
	// Forwarded counts events and results the control plane stored (a
	// duplicate it had stored before counts too); Refused those it
	// refused; Failures calls that failed and were retried.
	ForwardedEvents, ForwardedResults uint64
	RefusedEvents, RefusedResults     uint64
	Failures                          uint64
}

// Forwarder drains the buffer. Run it once.
type Forwarder struct {
	o    Options
	kick chan struct{}

	fwdEvents, fwdResults atomic.Uint64
	refEvents, refResults atomic.Uint64
	failures              atomic.Uint64

	mu     sync.RWMutex
	quotas map[string]*raftv1.QuotaStatus
}

// New makes a forwarder.
func New(o Options) *Forwarder {
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 4 << 20
	}
	if o.Lanes <= 0 {
		o.Lanes = 8
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Backoff.Min <= 0 {
		o.Backoff = link.Backoff{Min: 500 * time.Millisecond, Max: 30 * time.Second}
	}
	if o.Revoked <= 0 {
		o.Revoked = 30 * time.Second
	}
	if o.HeartbeatEvery <= 0 {
		o.HeartbeatEvery = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return &Forwarder{o: o, kick: make(chan struct{}, 1), quotas: map[string]*raftv1.QuotaStatus{}}
}

// Kick says that the buffer has something new (it saves the poll wait).
func (f *Forwarder) Kick() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Quota returns the last quota the control plane reported for an
// account, for the local ingest's X-Quota-* headers.
func (f *Forwarder) Quota(accountID string) (*raftv1.QuotaStatus, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	q, ok := f.quotas[accountID]
	return q, ok
}

// Stats returns the counters; safe at any time.
func (f *Forwarder) Stats() Stats {
	return Stats{
		ForwardedEvents: f.fwdEvents.Load(), ForwardedResults: f.fwdResults.Load(),
		RefusedEvents: f.refEvents.Load(), RefusedResults: f.refResults.Load(), Failures: f.failures.Load(),
	}
}

// Run drains the buffer and sends heartbeats until ctx ends.
func (f *Forwarder) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { f.heartbeats(ctx) })
	for ctx.Err() == nil {
		moved, err := f.step(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			f.failures.Add(1)
			first := f.o.Backoff.Fresh()
			wait := f.o.Backoff.Next()
			switch {
			case link.IsUnauthenticated(err):
				wait = f.o.Revoked
			case first:
				// The first failure after a success: the link has moved to
				// the next control URL (a node that died, or a leader
				// change), so try it at once; back off from the second.
				wait = 0
			}
			f.o.Logger.Debug("forwarding failed; the batch stays buffered", "retry_in", wait, "error", err)
			link.Sleep(ctx.Done(), wait)
			continue
		}
		f.o.Backoff.Reset()
		if !moved {
			t := time.NewTimer(f.o.Poll)
			select {
			case <-ctx.Done():
			case <-f.kick:
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// step forwards one batch of events and one of results; moved reports
// whether there was anything.
func (f *Forwarder) step(ctx context.Context) (moved bool, err error) {
	ne, err := f.events(ctx)
	if err != nil {
		return ne > 0, err
	}
	nr, err := f.results(ctx)
	return ne+nr > 0, err
}

// results reports the oldest batch of verdicts and acknowledges it.
func (f *Forwarder) results(ctx context.Context) (int, error) {
	batch, err := f.o.Buffer.Results(f.o.Batch, f.o.BatchBytes)
	if err != nil {
		return 0, fmt.Errorf("read buffered results: %w", err)
	}
	if len(batch) == 0 {
		return 0, nil
	}
	req := &agentv1.ReportExecutionsRequest{Executions: make([]*raftv1.Execution, len(batch))}
	for i, e := range batch {
		req.Executions[i] = e.Execution
	}
	resp, err := f.o.Control.ReportExecutions(ctx, req)
	if err != nil {
		return len(batch), fmt.Errorf("report %d results: %w", len(batch), err)
	}
	res := resp.GetResults()
	if len(res) != len(batch) {
		return len(batch), fmt.Errorf("report %d results: the control plane answered %d; the batch stays buffered", len(batch), len(res))
	}
	stored := 0
	for i, r := range res {
		if r.GetStored() {
			stored++
			continue
		}
		ex := batch[i].Execution
		f.refResults.Add(1)
		f.count(KindResult, "refused", 1)
		f.o.Logger.Warn("the control plane refused a check result; it is dropped from the buffer", "check", ex.GetCheckUuid(),
			"slot_unix_ms", ex.GetSlotUnixMs(), "status", ex.GetStatus(), "error", r.GetError())
	}
	f.fwdResults.Add(uint64(stored))
	if f.o.Metrics != nil {
		f.o.Metrics.Forwarded(KindResult, stored)
	}
	if err := f.o.Buffer.AckResults(batch[len(batch)-1].Seq); err != nil {
		return len(batch), fmt.Errorf("acknowledge %d reported results: %w", len(batch), err)
	}
	return len(batch), nil
}

func (f *Forwarder) count(kind, reason string, n int) {
	if f.o.Metrics != nil {
		f.o.Metrics.Refused(kind, reason, n)
	}
}

// refusal names an event outcome that is not stored, for the metrics.
func refusal(o raftv1.EventOutcome) string {
	switch o {
	case raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT:
		return "monitor_limit"
	case raftv1.EventOutcome_EVENT_OUTCOME_SUSPENDED:
		return "suspended"
	case raftv1.EventOutcome_EVENT_OUTCOME_UNAUTHORIZED:
		return "unauthorized"
	case raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_RATE:
		return "monitor_rate"
	case raftv1.EventOutcome_EVENT_OUTCOME_INVALID:
		return "invalid"
	}
	return "other"
}

// heartbeats reports the agent's state every HeartbeatEvery (every
// Revoked while the token is refused) until ctx ends.
func (f *Forwarder) heartbeats(ctx context.Context) {
	for {
		err := f.Heartbeat(ctx)
		wait := f.o.HeartbeatEvery
		if link.IsUnauthenticated(err) {
			wait = max(wait, f.o.Revoked)
		}
		if !link.Sleep(ctx.Done(), wait) {
			return
		}
	}
}

// Heartbeat sends one heartbeat.
func (f *Forwarder) Heartbeat(ctx context.Context) error {
	st := f.o.Buffer.Stats()
	req := &agentv1.HeartbeatRequest{BufferedEvents: st.Events, BufferedResults: st.Results, OldestBufferedUnixMs: st.OldestUnixMs}
	if f.o.Members != nil {
		req.Members = f.o.Members.MemberIDs()
	}
	_, err := f.o.Control.Heartbeat(ctx, req)
	if err != nil && !errors.Is(err, context.Canceled) {
		f.o.Logger.Debug("heartbeat failed", "error", err)
	}
	return err
}
