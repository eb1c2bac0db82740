// Package runner runs the agent's checks: for each assigned check this
// agent owns in its region, an execution at every slot of the check's
// schedule (internal/schedule: interval slots from a stable per-check
// offset, cron in UTC), with the probes of internal/probe and the retry
// policy of every check (up to 3 retries, 1, 2 and 4 s apart,
// after a transient failure). Each verdict (success or failed) becomes a
// raftv1.Execution appended to the buffer, which forwards it.
//
// A check that is added or changed runs once at once, then on its
// schedule. A slot missed (the agent was down, or every worker or the
// account's share busy for longer than MaxLate) is not run late; the next
// one is. Ownership is asked at each slot, so when a member of the region
// dies the new owner starts on the check's next slot.
//
// An agent may serve several accounts (a token without accounts serves
// every one of its region), so executions run in a pool shared fairly by
// the accounts (internal/fairshare): one account has at most AccountShare
// under way at once, and its targets that never answer delay no other
// account's checks.
package runner

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/internal/checkrun"
	"lookout/internal/fairshare"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/nextrun"
	"lookout/internal/probe"
	"lookout/internal/schedule"
)

// Checks are the assigned checks (*assign.Store).
type Checks interface {
	Checks() []*agentv1.Check
	Changed() <-chan struct{}
}

// Owner says whether this agent runs a check, which the agents of tokens
// may run (*region.Pool).
type Owner interface {
	Owns(checkID string, tokens []string) bool
}

// Sink takes the verdicts (the agent's buffer).
type Sink interface {
	AppendResult(ex *raftv1.Execution) error
}

// Metrics counts executions by status and those waiting for their
// account's share (nil: none).
type Metrics interface {
	Executed(status string)
	WaitingForShare(n int)
}

// Options configures the runner.
type Options struct {
	Checks Checks
	Owner  Owner
	Sink   Sink
	// Region and Agent are stamped on the executions (the control plane
	// stamps its own view of both too).
	Region func() string
	Agent  string
	// Probers by check kind (default checkrun.Probers, Version in
	// the User-Agent, dialling through DialContext).
	Probers map[string]probe.Prober
	Version string
	// DialContext opens the default probers' connections; nil means a
	// plain dialer, since agents exist to reach private endpoints
	// (lookout agent --deny-private-targets passes a netguard dialer).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Now and After are the clock (default the real one).
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// RetryDelays: the waits before each retry (default 1 s, 2 s, 4 s).
	RetryDelays []time.Duration
	// MaxLate is how late a slot may still start (default 30 s).
	MaxLate time.Duration
	// Workers bounds the attempts under way at once (default 32). A
	// retry's wait holds no worker.
	Workers int
	// AccountShare bounds one account's executions under way at once,
	// retry waits included (default fairshare.DefaultShare, 8; negative:
	// no bound but Workers).
	AccountShare int
	Metrics      Metrics
	Logger       hclog.Logger
}

// Stats are the runner's counters.
type Stats struct {
	// Scheduled is the number of checks with a next slot.
	Scheduled int
	// WaitingForShare executions are due but wait because their account
	// has AccountShare under way.
	WaitingForShare int
	// Runs counts executions started; Skipped slots not run (too late,
	// or the check still running); NotOwned slots another member ran;
	// Errors verdicts the buffer refused.
	Runs, Skipped, NotOwned, Errors uint64
}

// Runner runs the checks. Make it before the assignments stream starts
// (the checks it holds then are the agent's last, from disk: they run on
// their schedule; any check added or changed afterwards runs at once).
// Run it once.
type Runner struct {
	o       Options
	initial []*agentv1.Check // held when New was called

	scheduled, waitingForShare      atomic.Int64
	runs, skipped, notOwned, errors atomic.Uint64
}

// New makes a runner.
func New(o Options) *Runner {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.After == nil {
		o.After = time.After
	}
	if o.RetryDelays == nil {
		o.RetryDelays = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	}
	if o.MaxLate <= 0 {
		o.MaxLate = 30 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 32
	}
	if o.Region == nil {
		o.Region = func() string { return "" }
	}
	if o.Probers == nil {
		po := probe.Options{Version: o.Version, DialContext: o.DialContext}
		o.Probers = checkrun.Probers(po)
	}
	return &Runner{o: o, initial: o.Checks.Checks()}
}

// Stats returns the counters; safe at any time.
func (r *Runner) Stats() Stats {
	return Stats{Scheduled: int(r.scheduled.Load()), WaitingForShare: int(r.waitingForShare.Load()), Runs: r.runs.Load(), Skipped: r.skipped.Load(), NotOwned: r.notOwned.Load(), Errors: r.errors.Load()}
}

// entry is one scheduled check (Run's goroutine only).
type entry struct {
	nextrun.Entry // its next slot
	c             *agentv1.Check
	sched         schedule.Schedule
	running       bool
	rerun         bool // changed while running: run again when done
	gone          bool // removed while running
}

// Run schedules and runs the checks until ctx ends, then waits for the
// running executions to stop (an execution cut short records nothing).
func (r *Runner) Run(ctx context.Context) {
	pool := fairshare.New(ctx, fairshare.Options{Workers: r.o.Workers, Share: r.o.AccountShare, Throttled: func(n int) {
		r.waitingForShare.Store(int64(n))
		if r.o.Metrics != nil {
			r.o.Metrics.WaitingForShare(n)
		}
	}})
	defer pool.Close() // after ctx ended: waits for the executions under way
	done := make(chan string, r.o.Workers)
	entries := map[string]*entry{}
	var q nextrun.Queue[*entry]

	// The checks held when the runner was made (from disk) are
	// scheduled; every later change, even one made before Run, runs at
	// once.
	r.sync(entries, &q, r.initial, false)
	r.initial = nil
	r.sync(entries, &q, r.o.Checks.Checks(), true)
	var alarm nextrun.Alarm
	for {
		now := r.o.Now()
		for {
			e, due := q.PopDue(now)
			if !due {
				break
			}
			slot := e.Next.Truncate(time.Millisecond)
			e.Next = e.sched.NextFor(e.c.GetId(), e.Next)
			switch {
			case now.Sub(slot) > r.o.MaxLate:
				r.skipped.Add(1) // missed: the next slot runs
				e.Next = e.sched.NextFor(e.c.GetId(), now)
			case !r.o.Owner.Owns(e.c.GetId(), e.c.GetTokens()):
				r.notOwned.Add(1)
			case e.running:
				r.skipped.Add(1)
			default:
				e.running = true
				c := e.c
				pool.Submit(c.GetAccountId(), func(ctx context.Context, w *fairshare.Worker) {
					r.execute(ctx, w, c, slot)
					select {
					case done <- c.GetId():
					case <-ctx.Done():
					}
				})
			}
			q.Push(e)
		}
		r.scheduled.Store(int64(q.Len()))
		q.SetAlarm(&alarm, now, r.o.After)
		select {
		case <-ctx.Done():
			return
		case <-r.o.Checks.Changed():
			r.sync(entries, &q, r.o.Checks.Checks(), true)
		case id := <-done:
			e := entries[id]
			if e == nil {
				break
			}
			e.running = false
			switch {
			case e.gone:
				delete(entries, id)
			case e.rerun:
				e.rerun = false
				e.Next = r.o.Now()
				q.Fix(e)
			}
		case <-alarm.C:
			alarm.C = nil
		}
	}
}

// sync brings the entries in line with checks. With runNow, a check that
// is new or whose version changed runs at once.
func (r *Runner) sync(entries map[string]*entry, q *nextrun.Queue[*entry], checks []*agentv1.Check, runNow bool) {
	now := r.o.Now()
	seen := map[string]bool{}
	for _, c := range checks {
		id := c.GetId()
		seen[id] = true
		e := entries[id]
		if e != nil && !e.gone && e.c.GetVersion() == c.GetVersion() {
			continue
		}
		if e != nil && !e.gone && sameRun(e.c, c) {
			e.c = c // only who may run it changed (its tokens): the next slot asks again
			continue
		}
		sc, err := schedule.ParseIn(c.GetSchedule(), c.GetTimezone())
		if err != nil {
			r.o.Logger.Error("a check has a schedule the agent cannot parse; not running it", "check", id, "schedule", c.GetSchedule(), "timezone", c.GetTimezone(), "error", err)
			if e != nil {
				r.remove(entries, q, e)
			}
			continue
		}
		if e == nil {
			e = &entry{}
			entries[id] = e
		}
		e.c, e.sched, e.gone = c, sc, false
		e.Next = sc.NextFor(id, now)
		switch {
		case runNow && e.running:
			e.rerun = true // once the running execution ends
		case runNow:
			e.Next = now
		}
		q.Schedule(e)
	}
	for id, e := range entries {
		if !seen[id] {
			r.remove(entries, q, e)
		}
	}
}

// sameRun tells whether a and b run alike: they differ at most in the
// tokens whose agents may run them, a change of the region's agents
// rather than of the check.
func sameRun(a, b *agentv1.Check) bool {
	x, y := proto.Clone(a).(*agentv1.Check), proto.Clone(b).(*agentv1.Check)
	x.Version, x.Tokens, y.Version, y.Tokens = 0, nil, 0, nil
	return proto.Equal(x, y)
}

func (r *Runner) remove(entries map[string]*entry, q *nextrun.Queue[*entry], e *entry) {
	q.Remove(e)
	if e.running {
		e.gone, e.rerun = true, false
		return
	}
	delete(entries, e.c.GetId())
}

// execute runs the execution of check c for slot on worker w: up to
// 1+len(RetryDelays) attempts (each retry's wait without a worker), then
// the verdict into the sink.
func (r *Runner) execute(ctx context.Context, w *fairshare.Worker, c *agentv1.Check, slot time.Time) {
	if r.o.Now().Sub(slot) > r.o.MaxLate {
		r.skipped.Add(1) // waited for a worker or the account's share past MaxLate
		return
	}
	p := r.o.Probers[c.GetKind()]
	if p == nil {
		r.o.Logger.Error("a check of a kind this agent cannot run", "check", c.GetId(), "kind", c.GetKind())
		return
	}
	r.runs.Add(1)
	target := checkrun.Target(c.GetConfig())
	started := r.o.Now()
	ex := &raftv1.Execution{
		AccountId: c.GetAccountId(), CheckUuid: c.GetId(), Region: r.o.Region(), Agent: r.o.Agent,
		SlotUnixMs: slot.UnixMilli(), StartedUnixMs: started.UnixMilli(),
	}
	for attempt := 1; ; attempt++ {
		res := p.Probe(ctx, target)
		if ctx.Err() != nil {
			return
		}
		checkrun.Fill(ex, res, attempt)
		if res.OK() {
			ex.Status = checkrun.StatusSuccess
			break
		}
		if !res.Transient() || attempt > len(r.o.RetryDelays) {
			ex.Status = checkrun.StatusFailed
			break
		}
		if !w.Wait(r.o.After(r.o.RetryDelays[attempt-1])) {
			return
		}
	}
	ex.FinishedUnixMs = r.o.Now().UnixMilli()
	checkrun.Bound(ex)
	if err := r.o.Sink.AppendResult(ex); err != nil {
		r.errors.Add(1)
		r.o.Logger.Error("a check's verdict could not be buffered", "check", c.GetId(), "slot", slot, "status", ex.GetStatus(), "error", err)
		return
	}
	if r.o.Metrics != nil {
		r.o.Metrics.Executed(ex.GetStatus())
	}
	r.o.Logger.Debug("check ran", "check", c.GetId(), "slot", slot, "status", ex.GetStatus(), "attempts", ex.GetAttempts())
}
