package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// DeadlineState is what the deadline engine reads of the replicated state
// (*state.Store): the monitors, and the records of those applied entries
// changed (the engine reschedules from them without reading them back).
type DeadlineState interface {
	Watch(on bool)
	Changed() <-chan struct{}
	TakeMonitorChanges() (monitors []state.MonitorChange, overflow, alerts bool)
	PingMonitors(fn func(*statev1.Monitor) error) error
	Checks(fn func(*statev1.Monitor) error) error
	AllMaintenanceWindows(fn func(*raftv1.MaintenanceWindow) error) error
	ServiceLife() (*statev1.ServiceLife, error)
	WindowsChanged() <-chan struct{}
	MonitorByUUID(id string) (*statev1.Monitor, error)
}

// DeadlineOptions configures the deadline engine.
type DeadlineOptions struct {
	Cluster Applier
	State   DeadlineState
	Logger  hclog.Logger
	Now     func() time.Time
	// After is the timer (default time.After); tests inject their clock.
	After func(d time.Duration) <-chan time.Time
	// MaxInFlight bounds the commands proposed at once (default 16), each
	// of up to state.MaxFireDeadlines deadlines due together, so a burst
	// keeps up without holding the raft log for everything else.
	MaxInFlight int
	// RetryDelay is the wait before trying again after a failed proposal
	// or read (default 250ms).
	RetryDelay time.Duration
	// OnFire, if set, is called as each deadline is proposed, with its due
	// time and the time of the proposal (the engine's lag). It is called
	// from several goroutines at once.
	OnFire func(due, proposed time.Time)
	// Held, if set, tells whether the monitors whose newest ping came
	// through an agent region must not be judged now (the region is
	// offline, or its agents' buffers may still hold their pings:
	// control/presence). Their deadlines wait; HeldChanged makes the
	// engine look at every monitor again, so a deadline that passed
	// meanwhile fires then, once.
	Held        func(region string) bool
	HeldChanged <-chan struct{}
	// OnAlerts, if set, is called when applied entries raised alerts (the
	// engine reads the state's change feed, so it passes this on: the
	// alert dispatcher's Notify).
	OnAlerts func()
	// AliveInterval is how often the leader marks itself alive through
	// raft (default DefaultAliveInterval); OutageAfter how long after the
	// last mark a term must start for the gap to be an outage of the
	// whole service, whose ping monitor deadlines restart from its end
	// (default DefaultOutageAfter; at least state.MinOutageAfter).
	AliveInterval, OutageAfter time.Duration
}

// DeadlineStats are the engine's counters.
type DeadlineStats struct {
	// Scheduled deadlines wait in the heap; InFlight are being proposed.
	Scheduled, InFlight int
	// Next is the earliest scheduled deadline (zero: none).
	Next time.Time
	// Fired deadlines changed their monitor; Stale ones no longer were the
	// monitor's (a ping or a former leader came first, or it is gone);
	// Errors counts failed proposals (retried) and refused ones (dropped).
	Fired, Stale, Errors uint64
}

// Deadlines is the leader's deadline engine: a min-heap of the next
// timeout and missed deadline of every ping monitor, rebuilt from the state
// when the node becomes leader and kept current from the monitors that
// applied entries change. Deadlines that pass are proposed together, as
// FireDeadlines commands; the state machine applies each only if it is still
// the monitor's deadline, so a deadline fires once whichever leader
// proposes it, and one that passed during an election fires as soon as
// the next leader has rebuilt its heap. Run it as a leader task.
type Deadlines struct {
	o DeadlineOptions

	scheduled, inFlight, next atomic.Int64
	fired, stale, errs        atomic.Uint64
}

// NewDeadlines makes the engine.
func NewDeadlines(o DeadlineOptions) *Deadlines {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 16
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 250 * time.Millisecond
	}
	if o.AliveInterval <= 0 {
		o.AliveInterval = DefaultAliveInterval
	}
	if o.OutageAfter <= 0 {
		o.OutageAfter = DefaultOutageAfter
	}
	return &Deadlines{o: o}
}

// Stats returns the engine's counters; safe at any time.
func (d *Deadlines) Stats() DeadlineStats {
	s := DeadlineStats{
		Scheduled: int(d.scheduled.Load()), InFlight: int(d.inFlight.Load()),
		Fired: d.fired.Load(), Stale: d.stale.Load(), Errors: d.errs.Load(),
	}
	if n := d.next.Load(); n != 0 {
		s.Next = time.UnixMilli(n)
	}
	return s
}

// term is the engine's state during one leadership term (Run's goroutine
// only).
type term struct {
	d        *Deadlines
	heap     *deadlineHeap
	names    *names
	inFlight map[slot]int64 // proposed deadlines: not scheduled again meanwhile
	// proposals counts the commands in flight (at most MaxInFlight).
	proposals int
	retry     map[string]struct{}
	retryAll  bool
	retryAt   time.Time
	// windows are the maintenance windows by account and id, read at each
	// rebuild (quiet.go).
	windows map[string]map[string]*raftv1.MaintenanceWindow
	// dependents are, by the uuid of a monitor that is down, the monitors
	// whose alert it holds (quiet.go).
	dependents map[string]map[string]struct{}
}

// fired is the outcome of one proposal: its deadlines' slots and monitor
// ids, in the order of the command.
type fired struct {
	slots []slot
	ids   []string
	res   *raftv1.Result
	err   error
}

// Run marks the leader alive (alive.go: the term's first mark records an
// outage of the whole service, if there was one, before anything fires),
// rebuilds the heap and proposes deadlines as they pass until ctx ends
// (leadership lost), marking the leader alive every AliveInterval; it
// returns once its proposals have returned. One Run at a time.
func (d *Deadlines) Run(ctx context.Context) {
	st := d.o.State
	st.Watch(true) // before the rebuild: a change during it is not missed
	defer st.Watch(false)
	t := &term{d: d, heap: newDeadlineHeap(), names: newNames(), inFlight: map[slot]int64{}, retry: map[string]struct{}{},
		dependents: map[string]map[string]struct{}{}}
	results := make(chan fired, d.o.MaxInFlight)
	defer d.publish(0, 0, 0) // not leading: nothing scheduled
	var wg sync.WaitGroup
	defer wg.Wait()
	if !d.startTerm(ctx) {
		return
	}
	wg.Go(func() { d.keepAlive(ctx) })
	windowsChanged := st.WindowsChanged() // before the rebuild reads them
	t.rebuild()
	var timer <-chan time.Time
	var timerAt time.Time
	for {
		now := d.o.Now()
		if !t.retryAt.IsZero() && !now.Before(t.retryAt) {
			t.retryNow()
		}
		t.fire(ctx, now, results, &wg)
		t.publish()
		wake := t.wake()
		if wake.IsZero() {
			timer = nil
		} else if timer == nil || !wake.Equal(timerAt) {
			timer, timerAt = d.o.After(wake.Sub(now)), wake
		}
		select {
		case <-ctx.Done():
			return
		case <-st.Changed():
			changes, overflow, alerts := st.TakeMonitorChanges()
			if alerts && d.o.OnAlerts != nil {
				d.o.OnAlerts()
			}
			if overflow {
				t.rebuild() // too many to list
				break
			}
			for _, c := range changes {
				t.changed(c)
			}
		case <-d.o.HeldChanged:
			t.rebuild()
		case <-windowsChanged:
			windowsChanged = st.WindowsChanged()
			t.rebuild() // the monitors the windows hold: judged again
		case r := <-results:
			t.finish(ctx, r)
		case <-timer:
			timer = nil
		}
	}
}

// rebuild schedules the deadlines of every monitor afresh.
func (t *term) rebuild() {
	start := time.Now()
	t.heap.reset()
	t.retryAll = false
	clear(t.retry)
	t.dependents = map[string]map[string]struct{}{}
	n := 0
	err := t.readWindows()
	each := func(m *statev1.Monitor) error {
		t.schedule(t.names.key(m.GetUuid()), m)
		n++
		return nil
	}
	if err == nil {
		err = t.d.o.State.PingMonitors(each)
	}
	if err == nil {
		err = t.d.o.State.Checks(each)
	}
	if err != nil {
		t.d.o.Logger.Error("deadline engine: reading the monitors failed", "error", err)
		t.retryAll = true
		t.armRetry()
		return
	}
	t.d.o.Logger.Info("deadline engine ready", "monitors", n, "deadlines", t.heap.Len(), "took", time.Since(start).Round(time.Millisecond))
}

// refresh reschedules monitor id from the state.
func (t *term) refresh(id string) {
	m, err := t.d.o.State.MonitorByUUID(id)
	t.reschedule(id, m, err)
}

// changed reschedules a monitor from the record an applied entry left.
func (t *term) changed(c state.MonitorChange) {
	m, err := c.Monitor()
	t.reschedule(c.UUID, m, err)
}

// reschedule schedules monitor id as read (m, err): removed when it is not
// found, retried from the state when it could not be read.
func (t *term) reschedule(id string, m *statev1.Monitor, err error) {
	k := t.names.key(id)
	switch {
	case errors.Is(err, state.ErrNotFound):
		t.heap.remove(k)
		t.dependencyChanged(id, nil)
	case err != nil:
		t.d.o.Logger.Warn("deadline engine: reading a monitor failed", "monitor", id, "error", err)
		t.retry[id] = struct{}{}
		t.armRetry()
	default:
		t.schedule(k, m)
		t.dependencyChanged(id, m)
	}
}

// schedule replaces the deadlines of monitor m (key k) with its current
// ones.
func (t *term) schedule(k monKey, m *statev1.Monitor) {
	var timeout, late, missed int64
	if m.GetKind() == state.KindPing {
		timeout, late, missed = pingstate.Deadlines(state.PingSettings(m), state.PingState(m))
		if r := m.GetPing().GetLastRegion(); r != "" && t.d.o.Held != nil && t.d.o.Held(r) {
			timeout, late, missed = 0, 0, 0 // not judged while its region is held
		}
	}
	acct := t.names.acct(m.GetAccountId())
	for kind, due := range [...]int64{kindTimeout: timeout, kindLate: late, kindMissed: missed, kindQuiet: t.quietDue(m)} {
		if due != 0 && t.inFlight[slot{k, uint8(kind)}] == due {
			due = 0 // being proposed
		}
		t.heap.set(k, uint8(kind), acct, due)
	}
}

// fire proposes the deadlines due at now, as many commands as MaxInFlight
// allows: the ping deadlines due together in FireDeadlines commands of up
// to state.MaxFireDeadlines each (one raft entry for a burst), a quiet
// deadline (a window or a dependency over) as a JudgeAfresh of its own.
func (t *term) fire(ctx context.Context, now time.Time, results chan<- fired, wg *sync.WaitGroup) {
	var batch []item
	for {
		it, ok := t.heap.peek()
		if !ok || it.due > now.UnixMilli() {
			break
		}
		// A deadline joins the batch under way; a new command needs a
		// free place beside it.
		if len(batch) == 0 || it.kind == kindQuiet {
			if t.proposals+min(len(batch), 1) >= t.d.o.MaxInFlight {
				break
			}
		}
		t.heap.pop()
		t.inFlight[slot{it.id, it.kind}] = it.due
		if it.kind == kindQuiet {
			t.propose(ctx, []item{it}, results, wg)
			continue
		}
		if batch = append(batch, it); len(batch) == state.MaxFireDeadlines {
			t.propose(ctx, batch, results, wg)
			batch = nil
		}
	}
	if len(batch) > 0 {
		t.propose(ctx, batch, results, wg)
	}
}

// propose applies one command for items (ping deadlines, or one quiet
// deadline) in a goroutine that sends its outcome to results.
func (t *term) propose(ctx context.Context, items []item, results chan<- fired, wg *sync.WaitGroup) {
	o := t.d.o
	t.proposals++
	f := fired{slots: make([]slot, len(items)), ids: make([]string, len(items))}
	var cmd *raftv1.Command
	if items[0].kind == kindQuiet {
		f.slots[0], f.ids[0] = slot{items[0].id, kindQuiet}, t.names.id(items[0].id)
		cmd = &raftv1.Command{Op: &raftv1.Command_JudgeAfresh{JudgeAfresh: &raftv1.JudgeAfresh{MonitorUuids: []string{f.ids[0]}}}}
	} else {
		fds := make([]*raftv1.FireDeadline, len(items))
		for i, it := range items {
			f.slots[i], f.ids[i] = slot{it.id, it.kind}, t.names.id(it.id)
			fds[i] = &raftv1.FireDeadline{AccountId: t.names.accts[it.acct], MonitorUuid: f.ids[i], Kind: kindNames[it.kind], DueUnixMs: it.due}
		}
		cmd = &raftv1.Command{Op: &raftv1.Command_FireDeadlines{FireDeadlines: &raftv1.FireDeadlines{Deadlines: fds}}}
	}
	wg.Go(func() {
		if o.OnFire != nil {
			proposed := o.Now()
			for _, fd := range cmd.GetFireDeadlines().GetDeadlines() {
				o.OnFire(time.UnixMilli(fd.GetDueUnixMs()), proposed)
			}
		}
		f.res, f.err = o.Cluster.Apply(ctx, cmd)
		results <- f
	})
}

// finish counts a proposal's outcome, deadline by deadline. A failed one is
// retried from the state after RetryDelay (it may have been applied after
// all); one the state refused is dropped. A fired one needs nothing: the
// entry changed the monitor, which comes back as a change with its next
// deadline.
func (t *term) finish(ctx context.Context, f fired) {
	t.proposals--
	items := f.res.GetItems()
	for i, s := range f.slots {
		delete(t.inFlight, s)
		res := f.res
		if s.kind != kindQuiet && res.GetStatus() == raftv1.Status_STATUS_OK {
			if len(items) != len(f.slots) {
				res = &raftv1.Result{Status: raftv1.Status_STATUS_UNSPECIFIED, Message: fmt.Sprintf("%d results for %d deadlines", len(items), len(f.slots))}
			} else {
				res = items[i]
			}
		}
		t.finishOne(ctx, s, f.ids[i], res, f.err)
	}
}

// finishOne counts the outcome of one deadline.
func (t *term) finishOne(ctx context.Context, s slot, id string, res *raftv1.Result, err error) {
	d := t.d
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return // leadership lost: the next leader proposes it
		}
		d.errs.Add(1)
		if t.retryAt.IsZero() {
			d.o.Logger.Warn("deadline engine: proposing a deadline failed; retrying", "monitor", id, "error", err)
		}
		t.retry[id] = struct{}{}
		t.armRetry()
	case s.kind == kindQuiet && res.GetStale():
		// The state machine found nothing due where the engine did (its
		// view of a window or a dependency was behind): look again
		// after a while rather than at once.
		d.stale.Add(1)
		t.retry[id] = struct{}{}
		t.armRetry()
	case res.GetStatus() == raftv1.Status_STATUS_NOT_FOUND,
		res.GetStatus() == raftv1.Status_STATUS_OK && res.GetStale():
		d.stale.Add(1)
	case res.GetStatus() == raftv1.Status_STATUS_OK:
		d.fired.Add(1)
	default:
		d.errs.Add(1)
		d.o.Logger.Error("deadline engine: a deadline was refused", "monitor", id, "status", res.GetStatus(), "message", res.GetMessage())
	}
}

// armRetry sets the retry time unless one is set.
func (t *term) armRetry() {
	if t.retryAt.IsZero() {
		t.retryAt = t.d.o.Now().Add(t.d.o.RetryDelay)
	}
}

// retryNow rereads what failed.
func (t *term) retryNow() {
	t.retryAt = time.Time{}
	if t.retryAll {
		t.rebuild()
		return
	}
	ids := make([]string, 0, len(t.retry))
	for id := range t.retry {
		ids = append(ids, id)
	}
	clear(t.retry)
	for _, id := range ids {
		t.refresh(id)
	}
}

// wake is when the loop must look again without being told (zero: only
// when told): the earliest deadline, unless the proposals are at their
// bound, or the retry time.
func (t *term) wake() time.Time {
	var at time.Time
	if it, ok := t.heap.peek(); ok && t.proposals < t.d.o.MaxInFlight {
		at = time.UnixMilli(it.due)
	}
	if !t.retryAt.IsZero() && (at.IsZero() || t.retryAt.Before(at)) {
		at = t.retryAt
	}
	return at
}

// publish updates the counters Stats reads.
func (t *term) publish() {
	next := int64(0)
	if it, ok := t.heap.peek(); ok {
		next = it.due
	}
	t.d.publish(t.heap.Len(), len(t.inFlight), next)
}

func (d *Deadlines) publish(scheduled, inFlight int, nextMs int64) {
	d.scheduled.Store(int64(scheduled))
	d.inFlight.Store(int64(inFlight))
	d.next.Store(nextMs)
}
