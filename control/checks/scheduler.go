// Package checks is the leader's check scheduler: it runs every enabled
// check (http_check, ssl_check, tcp_check, dns_check) without regions on
// its schedule, with retries, and records each execution through raft.
//
// Executions run in a pool shared fairly by the accounts
// (internal/fairshare): one account has at most AccountShare executions
// under way at once, so its targets that never answer delay no other
// account's checks.
package checks

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/state"
	"lookout/internal/checkrun"
	"lookout/internal/fairshare"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/metrics"
	"lookout/internal/netguard"
	"lookout/internal/nextrun"
	"lookout/internal/probe"
	"lookout/internal/schedule"
)

// Writer proposes commands through raft (*cluster.Node).
type Writer interface {
	Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error)
}

// State is what the scheduler reads of the replicated state (*state.Store).
type State interface {
	Checks(fn func(*statev1.Monitor) error) error
	Execution(checkUUID, region string, slotMs int64) (*raftv1.Execution, error)
	CheckStatus(checkUUID string) (*statev1.CheckStatus, error)
}

// Feed tells which monitors applied entries changed, with their records as
// committed (*state.Feed).
type Feed interface {
	Watch(on bool)
	Changed() <-chan struct{}
	TakeMonitorChanges() (monitors []state.MonitorChange, overflow, alerts bool)
}

// Options configures the scheduler.
type Options struct {
	Cluster Writer
	State   State
	Feed    Feed
	Logger  hclog.Logger
	// Probers by monitor kind (default: checkrun.Probers, with
	// Version in the User-Agent, dialling through DialContext).
	Probers map[string]probe.Prober
	Version string
	// DialContext opens the default probers' connections. Nil means a
	// netguard dialer that refuses loopback, private, link-local ...
	// addresses: the checks are a tenant's, run from inside the operator's
	// network. lookout control passes one that allows them with
	// --allow-private-targets.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Now and After are the clock (default the real one); the retry waits
	// use After too.
	Now   func() time.Time
	After func(d time.Duration) <-chan time.Time
	// Workers bounds the attempts under way at once (default 64). A retry's
	// wait holds no worker.
	Workers int
	// AccountShare bounds one account's executions under way at once,
	// retry waits included (default fairshare.DefaultShare, 8; negative:
	// no bound but Workers). An account's due executions beyond it wait
	// in the account's own queue, never in front of another account's.
	AccountShare int
	// MaxLate is how late a slot may still start (default 30 s); a slot
	// missed by more (the leader was away, or the slot waited that long
	// for a worker or its account's share) is not run, the next one is.
	MaxLate time.Duration
	// RetryDelays are the waits before the retries of a transient failure
	// (default 1 s, 2 s, 4 s: up to 4 attempts).
	RetryDelays []time.Duration
	// RetentionCount is stamped on every RecordExecutions (executions kept
	// per check; default state.DefaultExecutionRetention).
	RetentionCount int64
	// OnStart, if set, is called as the first attempt of an execution
	// starts, with its slot (the scheduling lag is the difference).
	OnStart func(slot, started time.Time)
	// Metrics counts the executions recorded with a verdict and those
	// waiting for their account's share (nil: none).
	Metrics *metrics.Checks
}

// Stats are the scheduler's counters.
type Stats struct {
	// Ready is true while the scheduler leads: it has read the checks and
	// follows their changes.
	Ready bool
	// Scheduled checks wait for their next slot.
	Scheduled int
	// WaitingForShare executions are due but wait because their account
	// has AccountShare under way.
	WaitingForShare int
	// Runs counts executions started; Skipped slots missed (too late, or
	// already decided by an earlier leader); Errors proposals that
	// failed; Interrupted stranded executions closed (strand.go).
	Runs, Skipped, Errors, Interrupted uint64
}

// Scheduler is the leader's check scheduler. Run it as a leader task.
type Scheduler struct {
	o Options

	scheduled           atomic.Int64
	waitingForShare     atomic.Int64
	runs, skipped, errs atomic.Uint64
	interrupted         atomic.Uint64
	rebuilds            atomic.Uint64 // for tests: terms ready
	ready               atomic.Bool
}

// New makes the scheduler.
func New(o Options) *Scheduler {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.MaxLate <= 0 {
		o.MaxLate = 30 * time.Second
	}
	if o.RetryDelays == nil {
		o.RetryDelays = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	}
	if o.RetentionCount <= 0 {
		o.RetentionCount = state.DefaultExecutionRetention
	}
	if o.DialContext == nil {
		o.DialContext = netguard.New(netguard.Options{}).DialContext
	}
	if o.Probers == nil {
		po := probe.Options{Version: o.Version, DialContext: o.DialContext}
		o.Probers = checkrun.Probers(po)
	}
	return &Scheduler{o: o}
}

// Stats returns the counters; safe at any time.
func (s *Scheduler) Stats() Stats {
	return Stats{Ready: s.ready.Load(), Scheduled: int(s.scheduled.Load()), WaitingForShare: int(s.waitingForShare.Load()),
		Runs: s.runs.Load(), Skipped: s.skipped.Load(), Errors: s.errs.Load(), Interrupted: s.interrupted.Load()}
}

// entry is one scheduled check (Run's goroutine only).
type entry struct {
	nextrun.Entry // its next run; not queued while running or unscheduled
	m             *statev1.Monitor
	sched         schedule.Schedule
	// running: its execution is in the pool (waiting or under way).
	running bool
	// rerun: the check changed while running; run it again when done.
	rerun bool
	// strand is the check's execution an earlier runner left unfinished
	// for the slot next (rerun when that slot runs, closed if it does not).
	strand *raftv1.Execution
}

// job is one execution for the pool.
type job struct {
	m    *statev1.Monitor
	slot time.Time
}

// term is the scheduler's state during one leadership term.
type term struct {
	s       *Scheduler
	entries map[string]*entry
	queue   nextrun.Queue[*entry]
	pool    *fairshare.Pool
	done    chan string // checks whose execution ended
	// closing are stranded executions to close as interrupted (strand.go).
	closing []*raftv1.Execution
}

// Run schedules the checks until ctx ends (leadership lost); it returns
// once its workers have. One Run at a time.
func (s *Scheduler) Run(ctx context.Context) {
	f := s.o.Feed
	f.Watch(true) // before the rebuild: a change during it is not missed
	defer f.Watch(false)
	t := &term{s: s, entries: map[string]*entry{}, done: make(chan string, s.o.Workers)}
	t.pool = fairshare.New(ctx, fairshare.Options{Workers: s.o.Workers, Share: s.o.AccountShare, Throttled: func(n int) {
		s.waitingForShare.Store(int64(n))
		s.o.Metrics.WaitingForShare(n)
	}})
	defer t.pool.Close() // after ctx ended: waits for the executions under way
	defer s.scheduled.Store(0)
	defer s.ready.Store(false)
	t.rebuild(ctx)
	s.ready.Store(true)
	var alarm nextrun.Alarm
	for {
		now := s.o.Now()
		t.fire(now)
		t.closeStranded(ctx)
		s.scheduled.Store(int64(t.queue.Len()))
		t.queue.SetAlarm(&alarm, now, s.o.After)
		select {
		case <-ctx.Done():
			return
		case <-f.Changed():
			changes, overflow, _ := f.TakeMonitorChanges()
			if overflow {
				t.rebuild(ctx)
				break
			}
			for _, c := range changes {
				if t.entries[c.UUID] == nil && c.Kind() == state.KindPing {
					continue // a ping monitor: nothing to schedule, no need to decode it
				}
				m, err := c.Monitor()
				t.refresh(c.UUID, m, err)
			}
		case id := <-t.done:
			t.finished(id)
		case <-alarm.C:
			alarm.C = nil
		}
	}
}

// rebuild schedules every check afresh. A check whose latest slot passed
// at most MaxLate ago without a verdict (the former leader died while it
// was due) runs it now. An execution an earlier runner left unfinished is
// rerun if it is of that slot, else closed as interrupted (strand.go).
func (t *term) rebuild(ctx context.Context) {
	now := t.s.o.Now()
	for id, e := range t.entries {
		if !e.running {
			t.unschedule(e)
			delete(t.entries, id)
		}
	}
	n := 0
	err := t.s.o.State.Checks(func(m *statev1.Monitor) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e := t.entries[m.GetUuid()]
		var strand *raftv1.Execution
		if e == nil || !e.running { // a running one is this term's own
			strand = t.stranded(m.GetUuid())
		}
		sc, ok := state.LeaderSchedule(m)
		if !ok {
			t.settle(strand)
			return nil
		}
		n++
		if e == nil {
			e = &entry{}
			t.entries[m.GetUuid()] = e
		}
		e.m, e.sched = m, sc
		e.Next = sc.NextFor(m.GetUuid(), now)
		if last, ok := latestSlot(sc, m.GetUuid(), now, t.s.o.MaxLate); ok {
			e.Next = last // the worker skips it if it has a verdict
		}
		if strand != nil && strand.GetSlotUnixMs() == e.Next.UnixMilli() {
			e.strand = strand
		} else {
			t.settle(strand)
		}
		if !e.running {
			t.queue.Push(e)
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		t.s.o.Logger.Error("check scheduler: reading the checks failed", "error", err)
	}
	t.closeStranded(ctx) // before anything of theirs runs
	t.s.o.Logger.Info("check scheduler ready", "checks", n)
	t.s.rebuilds.Add(1)
}

// refresh reschedules check id after a change, from its record as the
// change left it (m, or err: ErrNotFound when deleted). A created, changed
// or enabled check runs at once, then on its schedule.
func (t *term) refresh(id string, m *statev1.Monitor, err error) {
	e := t.entries[id]
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		t.s.o.Logger.Warn("check scheduler: reading a check failed", "check", id, "error", err)
		return
	}
	sc, ok := schedule.Schedule{}, false
	if err == nil {
		sc, ok = state.LeaderSchedule(m)
	}
	if !ok {
		if e != nil {
			t.settle(e.strand)
			e.strand = nil
			t.unschedule(e)
			if !e.running {
				delete(t.entries, id)
			} else {
				e.m, e.rerun = nil, false
			}
		}
		return
	}
	if e != nil && e.m != nil && e.m.GetUpdatedUnixMs() == m.GetUpdatedUnixMs() {
		return // not a change of the check (its own executions do not come here)
	}
	if e == nil {
		e = &entry{}
		t.entries[id] = e
	}
	e.m, e.sched = m, sc
	e.Next = t.s.o.Now()
	if e.running {
		e.rerun = true
		return
	}
	t.reschedule(e)
}

// fire hands the checks due at now to the pool, keyed by account: it
// starts each at once unless every worker is busy or the account has its
// share under way, in which case it waits in the account's queue (and is
// skipped when its turn comes more than MaxLate after its slot). A
// stranded execution waiting for its slot (entry.strand) is rerun if that
// slot runs, else closed.
func (t *term) fire(now time.Time) {
	for {
		e, due := t.queue.PopDue(now)
		if !due {
			return
		}
		slot := e.Next
		strand := e.strand
		e.strand = nil
		if strand != nil && strand.GetSlotUnixMs() != slot.UnixMilli() {
			t.settle(strand) // the check changed meanwhile: another slot runs
			strand = nil
		}
		if now.Sub(slot) > t.s.o.MaxLate {
			t.s.skipped.Add(1) // missed (the leader was away, or busy): the next slot runs
			t.settle(strand)
			e.Next = e.sched.NextFor(e.m.GetUuid(), now)
			t.queue.Push(e)
			continue
		}
		j := job{m: e.m, slot: slot.Truncate(time.Millisecond)}
		t.pool.Submit(j.m.GetAccountId(), func(ctx context.Context, w *fairshare.Worker) {
			t.s.execute(ctx, w, j)
			select {
			case t.done <- j.m.GetUuid():
			case <-ctx.Done():
			}
		})
		e.running = true
		e.Next = e.sched.NextFor(e.m.GetUuid(), slot)
	}
}

// finished notes that check id's execution ended.
func (t *term) finished(id string) {
	e := t.entries[id]
	if e == nil {
		return
	}
	e.running = false
	if e.m == nil { // removed while running
		delete(t.entries, id)
		return
	}
	if e.rerun {
		e.rerun = false
		e.Next = t.s.o.Now()
	}
	t.reschedule(e)
}

func (t *term) reschedule(e *entry) { t.queue.Schedule(e) }

func (t *term) unschedule(e *entry) { t.queue.Remove(e) }
