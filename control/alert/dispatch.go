// Package alert is the leader's alert dispatcher. The state machine puts
// every alert in a replicated outbox with one delivery per channel it is
// routed to; the dispatcher sends each delivery through its channel,
// retries failures with exponential backoff up to a total time, and
// records every attempt through raft. A new leader reads the outbox and
// resumes what is neither delivered nor given up, so a delivery is at
// least once; every payload carries the alert id, so receivers drop a
// repeat.
//
// The dispatcher reads only what is due: the state keeps the open
// deliveries in order of next try (state.DueDeliveries), and a pass
// reads that order up to now and sleeps until the next try it saw (or
// Interval). Slots are bounded in all, per account and per channel, so
// one dead or slow endpoint holds at most ChannelConcurrency of them and
// one account's dead endpoints at most AccountConcurrency, while the
// other channels' and accounts' deliveries go on. A delivery beyond its
// account's share stays in the outbox, due, and is taken by a pass after
// one of the account's attempts ended. A slot is held for the send only:
// the outcome is then recorded through raft outside the slots (at most
// maxRecording at once), so that the next send does not wait for the log
// and the records of many attempts go to raft together (one log append,
// one state transaction for those that arrive at once).
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
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/metrics"
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
	DueDeliveries(nowMs int64, fn func(state.DueDelivery) bool) (next int64, err error)
	Alert(id string) (*statev1.Alert, error)
	Channel(accountID, id string) (*statev1.Channel, error)
	NotificationGroups(accountID string) ([]*statev1.NotificationGroup, error)
	MonitorByUUID(id string) (*statev1.Monitor, error)
	ChannelsGeneration() uint64
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
	// Concurrency bounds the attempts under way (default 16).
	Concurrency int
	// ChannelConcurrency bounds the attempts under way to one channel (a
	// delivery's channel_ref: one default channel, or one channel of a
	// notification group), so that a dead or slow endpoint holds at most
	// that many of the Concurrency slots (default 2).
	ChannelConcurrency int
	// AccountConcurrency bounds the attempts under way for one account's
	// alerts, so that its dead or slow endpoints hold at most that many of
	// the Concurrency slots and delay no other account's alerts (default
	// 8; negative: no bound but Concurrency).
	AccountConcurrency int
	// MaxPerPass bounds the attempts one read of the outbox starts
	// (default 64); a pass that reaches it is followed by another at once.
	MaxPerPass int
	// Interval is the longest wait between two reads of the outbox
	// (default 1 s); a read waits less when the next try it saw is
	// sooner, and Notify or an attempt's end starts one at once.
	Interval time.Duration
	Logger   hclog.Logger
	Now      func() time.Time
	// Metrics counts the deliveries by channel type, and those waiting
	// for their account's share (nil: none).
	Metrics *metrics.Alerts
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
	o     DispatcherOptions
	wake  chan struct{} // read the outbox
	freed chan struct{} // a slot is free: fill it from the backlog

	// The due deliveries the last pass saw and did not start, in its
	// order, and whether it stopped before the end of the due part (Run's
	// goroutine only: backlog.go).
	backlog    []queued
	truncated  bool
	backlogMax int
	// What the backlog holds per channel ref and per account.
	queuedChan, queuedAcct map[string]int

	mu        sync.Mutex
	reads     uint64            // outbox reads started
	jobs      map[string]job    // deliveries this process is working on or just did
	running   int               // attempts under way, holding a slot
	recording int               // attempts sent, their outcome being recorded
	busy      map[string]int    // attempts under way per channel ref
	accounts  map[string]int    // attempts under way per account
	owners    map[string]string // account of alert id (a cache, see owner)
	chans     chanCache         // the channels made, by account and ref (chancache.go)

	records *recorder // the outcomes, recorded many to a command
}

// minPassGap is the least time between the starts of two passes over the
// outbox (real time, whatever the clock of the options).
const minPassGap = 2 * time.Millisecond

// DefaultConcurrency is the attempts under way at once unless
// DispatcherOptions.Concurrency says otherwise.
const DefaultConcurrency = 16

// maxRecording bounds the attempts whose outcome is being recorded
// through raft (sent, their slot free); past it no attempt starts until a
// record ends, so a log that cannot keep up holds the sends back.
const maxRecording = 256

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
		o.Concurrency = DefaultConcurrency
	}
	if o.ChannelConcurrency <= 0 {
		o.ChannelConcurrency = 2
	}
	if o.AccountConcurrency == 0 {
		o.AccountConcurrency = defaultAccountConcurrency
	}
	if o.MaxPerPass <= 0 {
		o.MaxPerPass = 64
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
	return &Dispatcher{o: o, wake: make(chan struct{}, 1), freed: make(chan struct{}, 1), backlogMax: maxBacklog, jobs: map[string]job{}, busy: map[string]int{},
		accounts: map[string]int{}, owners: map[string]string{}, records: &recorder{apply: o.Cluster.Apply}}
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
	defer d.o.Metrics.WaitingForShare(0)
	var wg sync.WaitGroup
	defer wg.Wait()
	d.mu.Lock()
	clear(d.jobs)
	clear(d.owners)
	d.mu.Unlock()
	d.resetBacklog()
	t := time.NewTimer(d.o.Interval)
	defer t.Stop()
	var last time.Time
	read := true
	for {
		// A slot that frees is filled from the backlog; the outbox is
		// read when something was raised (Notify), at the next try the
		// last read saw or after Interval, and when the backlog cannot
		// fill the free slots but the outbox holds more.
		if !read {
			read = d.fill(ctx, &wg)
		}
		if read {
			// In a burst, wakes within minPassGap share one pass rather
			// than each reading the due outbox from its start.
			if gap := minPassGap - time.Since(last); gap > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(gap):
				}
			}
			last = time.Now()
			next, err := d.pass(ctx, &wg)
			if err != nil && ctx.Err() == nil {
				d.o.Logger.Warn("reading the alert outbox failed", "error", err)
			}
			wait := d.o.Interval
			if !next.IsZero() {
				wait = max(min(wait, next.Sub(d.o.Now())), 0)
			}
			t.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			read = true
		case <-d.wake:
			// What was raised since is due from now: later in the
			// outbox than the backlog. While every slot is taken, it
			// waits until the backlog runs short.
			read = true
			if len(d.backlog) > 0 && d.slotsTaken() {
				d.truncated, read = true, false
			}
		case <-d.freed:
			read = false
		}
	}
}

// pass reads the due part of the outbox, earliest next try first, and
// starts an attempt for each delivery not known to this process while a
// slot is free: it skips a delivery whose channel has
// ChannelConcurrency attempts under way, or whose account has
// AccountConcurrency (its turn comes when one ends), and stops when it
// started MaxPerPass, or when no slot is free and the backlog is full (or
// it has read four backlogs' worth since). The due deliveries it does not
// start, up to maxBacklog, become the backlog, from which the slots that
// free are filled without reading the outbox again. It returns the next
// try after now that it saw (zero: none, or the pass stopped early; an
// attempt's end or the Interval wakes Run then).
func (d *Dispatcher) pass(ctx context.Context, wg *sync.WaitGroup) (time.Time, error) {
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
	d.resetBacklog()
	started, throttled, full := 0, 0, false
	afterFull := 0 // due deliveries seen since the slots were full
	next, err := d.o.State.DueDeliveries(now.UnixMilli(), func(due state.DueDelivery) bool {
		if ctx.Err() != nil {
			d.truncated = true
			return false
		}
		if d.known(due) {
			return true // under way, or recorded and not read back yet
		}
		account, a, err := d.owner(due)
		if err != nil {
			d.o.Logger.Warn("reading a due alert failed", "alert", due.AlertID, "error", err)
			return true
		}
		if !full {
			switch d.claim(due, account) {
			case claimStart:
				started++
				wg.Go(func() { d.attempt(ctx, due, account, a, now) })
				if started == d.o.MaxPerPass {
					d.truncated = true
					return false
				}
				return true
			case claimFull:
				full = true
			case claimShare:
				throttled++
			}
		}
		d.queue(due, account)
		if !full {
			// While a slot is free the pass reads on, to the end of
			// what is due if it must: the deliveries it has seen may
			// all be held back by their channel or account.
			return true
		}
		if afterFull++; len(d.backlog) == d.backlogMax || afterFull >= 4*d.backlogMax {
			d.truncated = true
			return false
		}
		return true
	})
	if err != nil {
		d.resetBacklog()
		return time.Time{}, fmt.Errorf("due deliveries: %w", err)
	}
	d.o.Metrics.WaitingForShare(throttled)
	if started == d.o.MaxPerPass {
		d.Notify() // more may be due
	}
	if next == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(next), nil
}

// What claim decided.
const (
	claimStart = iota // start an attempt
	claimSkip         // known to this process, or its channel is busy
	claimShare        // its account has AccountConcurrency attempts under way
	claimFull         // Concurrency attempts under way
)

// known tells whether this process knows the delivery already: claim
// would skip it, so a pass need not read its alert.
func (d *Dispatcher) known(due state.DueDelivery) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.jobs[due.AlertID+"\x00"+due.ChannelRef]
	return ok
}

// claim marks the delivery of account as under way, taking a slot,
// unless this process knows it already or no slot is free.
func (d *Dispatcher) claim(due state.DueDelivery, account string) int {
	key := due.AlertID + "\x00" + due.ChannelRef
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, known := d.jobs[key]; known {
		return claimSkip
	}
	switch {
	case d.running >= d.o.Concurrency, d.recording >= maxRecording:
		return claimFull
	case d.o.AccountConcurrency > 0 && d.accounts[account] >= d.o.AccountConcurrency:
		return claimShare
	case d.busy[due.ChannelRef] >= d.o.ChannelConcurrency:
		return claimSkip
	}
	d.jobs[key] = job{running: true}
	d.running++
	d.busy[due.ChannelRef]++
	d.accounts[account]++
	return claimStart
}

// sent frees the slot of the delivery of account, whose send ended and
// whose outcome is to be recorded, and wakes Run to fill it. The delivery
// stays under way for the passes until finish.
func (d *Dispatcher) sent(due state.DueDelivery, account string) {
	d.mu.Lock()
	d.free(due, account)
	d.recording++
	d.mu.Unlock()
	d.slotFreed()
}

// finish marks the delivery of account as ended, not to be tried again
// before notBefore, frees what it held (its slot, unless sent freed it;
// else its place among the records) and wakes Run.
func (d *Dispatcher) finish(due state.DueDelivery, account string, notBefore time.Time, wasSent bool) {
	d.mu.Lock()
	d.jobs[due.AlertID+"\x00"+due.ChannelRef] = job{doneAt: d.reads, notBefore: notBefore}
	if wasSent {
		d.recording--
	} else {
		d.free(due, account)
	}
	d.mu.Unlock()
	d.slotFreed()
}

// free gives back the slot of the delivery of account (d.mu held).
func (d *Dispatcher) free(due state.DueDelivery, account string) {
	d.running--
	if d.busy[due.ChannelRef]--; d.busy[due.ChannelRef] <= 0 {
		delete(d.busy, due.ChannelRef)
	}
	if d.accounts[account]--; d.accounts[account] <= 0 {
		delete(d.accounts, account)
	}
}

// attempt delivers a delivery of account the index has due at now, if
// its alert (a, read by the pass; nil: read it now) still has it due. A
// delivery it does not try (recorded since the index was read, or
// unreadable) waits an Interval before this process looks at it again.
func (d *Dispatcher) attempt(ctx context.Context, due state.DueDelivery, account string, a *statev1.Alert, now time.Time) {
	notBefore, wasSent := now.Add(d.o.Interval), false
	defer func() { d.finish(due, account, notBefore, wasSent) }()
	if a == nil {
		var err error
		if a, err = d.o.State.Alert(due.AlertID); err != nil {
			d.o.Logger.Warn("reading a due alert failed", "alert", due.AlertID, "error", err)
			return
		}
	}
	for _, dl := range a.GetDeliveries() {
		if dl.GetChannelRef() == due.ChannelRef && !dl.GetDelivered() && !dl.GetGivenUp() && dl.GetNextTryUnixMs() <= now.UnixMilli() {
			notBefore = d.deliver(ctx, a, dl, func() {
				wasSent = true
				d.sent(due, account)
			})
			return
		}
	}
}
