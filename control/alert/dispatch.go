// Package alert is the leader's alert dispatcher. The state machine puts
// every alert in a replicated outbox with one delivery per channel it is
// routed to; the dispatcher sends each delivery through its channel,
// retries failures with exponential backoff up to a total time, and
// records every attempt through raft. A new leader reads the outbox and
// resumes what is neither delivered nor given up, so a delivery is at
// least once; every payload carries the alert id, so receivers drop a
// repeat.
package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/alert/channel"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Channels makes the channel of a type from its config.
type Channels interface {
	Channel(typ string, config json.RawMessage) (channel.Channel, error)
}

// ChannelsFunc adapts a function to Channels:
// alert.ChannelsFunc(registry.New).
type ChannelsFunc func(typ string, config json.RawMessage) (channel.Channel, error)

// Channel calls f.
func (f ChannelsFunc) Channel(typ string, config json.RawMessage) (channel.Channel, error) {
	return f(typ, config)
}

// State is what the dispatcher reads of the replicated state
// (*state.Store satisfies it).
type State interface {
	PendingAlerts(limit int) ([]*statev1.Alert, error)
	Channel(accountID, id string) (*statev1.Channel, error)
	NotificationGroups(accountID string) ([]*statev1.NotificationGroup, error)
	MonitorByUUID(id string) (*statev1.Monitor, error)
}

// Applier proposes a command through raft.
type Applier interface {
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
}

// DispatcherOptions configures a Dispatcher. Cluster, State and Channels
// are required.
type DispatcherOptions struct {
	Cluster  Applier
	State    State
	Channels Channels
	// PanelURL is the web panel's base address; alerts link to
	// PanelURL/monitors/<uuid> (no link when empty).
	PanelURL string
	// MaxRetryTime bounds the retries of a delivery, counted from the
	// alert's occurrence (default 24 h). The last try is at that time at
	// the latest; a failure then gives up.
	MaxRetryTime time.Duration
	// Backoff is the wait after the attempt-th failed attempt (1-based);
	// default DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// SendTimeout bounds one attempt (default 30 s).
	SendTimeout time.Duration
	// Concurrency bounds the attempts under way (default 8).
	Concurrency int
	// Interval is how often the outbox is read (default 1 s); Notify
	// reads it at once.
	Interval time.Duration
	Logger   hclog.Logger
	Now      func() time.Time
}

// DefaultBackoff waits 10 s after the first failure, doubling up to 1 h,
// each within ±20 % of jitter so receivers that recover are not hit by
// every retry at once.
func DefaultBackoff(attempt int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < attempt && d < time.Hour; i++ {
		d *= 2
	}
	d = min(d, time.Hour)
	return d - d/5 + rand.N(2*d/5+1)
}

// Dispatcher delivers the outbox. Run it as a leader task.
type Dispatcher struct {
	o    DispatcherOptions
	wake chan struct{}
	sem  chan struct{}

	mu    sync.Mutex
	reads uint64         // outbox reads started
	jobs  map[string]job // deliveries this process is working on or just did
}

// job is this process's memory of one delivery, which the outbox may not
// show yet: it is under way, or it ended while or after the outbox was
// last read, or its record could not be written (no leader) and it waits.
type job struct {
	running   bool
	doneAt    uint64    // reads when it ended
	notBefore time.Time // not tried again before (record failed)
}

// NewDispatcher makes a dispatcher.
func NewDispatcher(o DispatcherOptions) *Dispatcher {
	if o.MaxRetryTime <= 0 {
		o.MaxRetryTime = 24 * time.Hour
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = 30 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Dispatcher{o: o, wake: make(chan struct{}, 1), sem: make(chan struct{}, o.Concurrency), jobs: map[string]job{}}
}

// Notify makes Run read the outbox now rather than at its next tick. The
// one reader of the store's change watch (state.TakeChanges) calls it
// when alerts were raised; the dispatcher does not take the changes
// itself, as that would steal the monitors the deadline engine needs.
// It never blocks.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers the outbox until ctx ends (leadership is lost), then
// waits for the attempts under way. Call one Run at a time.
func (d *Dispatcher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	d.mu.Lock()
	clear(d.jobs)
	d.mu.Unlock()
	t := time.NewTicker(d.o.Interval)
	defer t.Stop()
	for {
		if err := d.pass(ctx, &wg); err != nil && ctx.Err() == nil {
			d.o.Logger.Warn("reading the alert outbox failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
		}
	}
}

// pass reads the outbox and starts an attempt for every delivery that is
// due and not known to this process already, waiting for a free slot
// when Concurrency are under way.
func (d *Dispatcher) pass(ctx context.Context, wg *sync.WaitGroup) error {
	d.mu.Lock()
	d.reads++
	seq, now := d.reads, d.o.Now()
	for key, j := range d.jobs {
		// Ended before this read began: the read shows its record.
		if !j.running && j.doneAt < seq && !now.Before(j.notBefore) {
			delete(d.jobs, key)
		}
	}
	d.mu.Unlock()
	alerts, err := d.o.State.PendingAlerts(0)
	if err != nil {
		return fmt.Errorf("pending alerts: %w", err)
	}
	for _, a := range alerts {
		for _, dl := range a.GetDeliveries() {
			if dl.GetDelivered() || dl.GetGivenUp() || dl.GetNextTryUnixMs() > d.o.Now().UnixMilli() {
				continue
			}
			key := a.GetId() + "\x00" + dl.GetChannelRef()
			if !d.claim(key) {
				continue
			}
			select {
			case d.sem <- struct{}{}:
			case <-ctx.Done():
				d.finish(key, time.Time{})
				return nil
			}
			wg.Go(func() {
				defer func() { <-d.sem }()
				d.finish(key, d.deliver(ctx, a, dl))
			})
		}
	}
	return nil
}

// claim marks the delivery key as under way unless this process knows it
// already.
func (d *Dispatcher) claim(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, known := d.jobs[key]; known {
		return false
	}
	d.jobs[key] = job{running: true}
	return true
}

// finish marks the delivery key as ended, not to be tried again before
// notBefore.
func (d *Dispatcher) finish(key string, notBefore time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.jobs[key] = job{doneAt: d.reads, notBefore: notBefore}
}
