package checks

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"lookout/control/controltest"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/metrics"
	"lookout/internal/probe"
	"lookout/internal/schedule"
)

// base is a whole minute (an even one, for the cron test).
var base = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// clock is a manual clock; After fires when Advance passes its time.
type clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{c.now.Add(d), ch})
	return ch
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// prober answers with the results its function gives, per check URL, and
// remembers when each attempt was made.
type prober struct {
	clock  *clock
	mu     sync.Mutex
	calls  map[string][]time.Time
	result func(url string, n int) probe.Result
}

func (p *prober) Probe(ctx context.Context, t probe.Target) probe.Result {
	p.mu.Lock()
	p.calls[t.URL] = append(p.calls[t.URL], p.clock.Now())
	n := len(p.calls[t.URL])
	p.mu.Unlock()
	if p.result != nil {
		return p.result(t.URL, n)
	}
	return probe.Result{HTTP: &probe.HTTP{StatusCode: 200}}
}

func (p *prober) attempts(url string) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.calls[url]...)
}

type fixture struct {
	t       *testing.T
	clock   *clock
	store   *state.Store
	cluster *controltest.Cluster
	prober  *prober
	sched   *Scheduler
	cancel  context.CancelFunc
	stopped chan struct{}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := state.Open(state.Options{Dir: t.TempDir(), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := &clock{now: base}
	f := &fixture{t: t, clock: c, store: st, cluster: controltest.NewCluster(st, c.Now), prober: &prober{clock: c, calls: map[string][]time.Time{}}}
	f.account("a")
	return f
}

// account creates account id (on the free plan).
func (f *fixture) account(id string) {
	f.t.Helper()
	f.apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{AccountId: id, Email: id + "@example.com", Plan: &raftv1.Plan{Name: "free"},
		IngestKey:     &raftv1.Key{Id: "ik-" + id, AccountId: id, Type: raftv1.KeyType_KEY_TYPE_INGEST, Hash: []byte("ik-" + id)},
		ManagementKey: &raftv1.Key{Id: "mk-" + id, AccountId: id, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Hash: []byte("mk-" + id)}}}})
}

func (f *fixture) apply(c *raftv1.Command) {
	f.t.Helper()
	res, err := f.cluster.Apply(context.Background(), c)
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		f.t.Fatalf("apply: %v %v", res, err)
	}
}

// put creates or replaces check id (url https://<id>/).
func (f *fixture) put(id, sched string, enabled, create bool) {
	f.t.Helper()
	spec := &raftv1.MonitorSpec{Uuid: id, Kind: state.KindHTTPCheck, Name: id, Enabled: enabled, Schedule: sched,
		Config: &raftv1.CheckConfig{Url: url(id), Method: "GET", Timeout: 10, ExpectedStatus: new(int64(200))}}
	op := &raftv1.PutMonitors{AccountId: "a"}
	if create {
		op.Creates = append(op.Creates, spec)
	} else {
		op.Updates = append(op.Updates, spec)
	}
	f.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: op}})
}

func url(id string) string { return "https://" + id + "/" }

func (f *fixture) start(o Options) {
	o.Cluster, o.State, o.Feed = f.cluster, f.store, f.store.NewFeed()
	o.Now, o.After = f.clock.Now, f.clock.After
	if o.Probers == nil {
		o.Probers = map[string]probe.Prober{state.KindHTTPCheck: f.prober, state.KindSSLCheck: f.prober}
	}
	f.sched = New(o)
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.stopped = cancel, make(chan struct{})
	go func() { defer close(f.stopped); f.sched.Run(ctx) }()
	f.t.Cleanup(f.stop)
	f.waitFor("the scheduler's rebuild", 0, func() bool { return f.sched.rebuilds.Load() == 1 })
}

func (f *fixture) stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.stopped
		f.cancel = nil
	}
}

// verdicts lists the final executions of account a's check id, oldest
// slot first.
func (f *fixture) verdicts(id string) []*raftv1.Execution {
	f.t.Helper()
	return f.verdictsOf("a", id)
}

// verdictsOf lists the final executions of the account's check id, oldest
// slot first.
func (f *fixture) verdictsOf(account, id string) []*raftv1.Execution {
	f.t.Helper()
	execs, err := f.store.Executions(account, id, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []*raftv1.Execution
	for i := len(execs) - 1; i >= 0; i-- {
		if state.FinalStatus(execs[i].GetStatus()) {
			out = append(out, execs[i])
		}
	}
	return out
}

// waitFor polls cond (real time, a generous deadline), advancing the
// clock by step each time (0: not at all).
func (f *fixture) waitFor(what string, step time.Duration, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
		if step > 0 {
			f.clock.Advance(step)
		}
	}
}

// settle advances the clock in steps of step to until, giving the
// scheduler time to act at each.
func (f *fixture) settle(step time.Duration, until time.Time) {
	for f.clock.Now().Before(until) {
		f.clock.Advance(step)
		time.Sleep(3 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
}

func TestIntervalChecksRunAtTheirOwnOffset(t *testing.T) {
	f := newFixture(t)
	ids := []string{"c0000000-0000-4000-8000-000000000001", "c0000000-0000-4000-8000-000000000002", "c0000000-0000-4000-8000-000000000003"}
	for _, id := range ids {
		f.put(id, "1m", true, true)
	}
	f.start(Options{MaxLate: 10 * time.Second}) // see TestNoCatchUpAfterAPause
	f.settle(time.Second, base.Add(4*time.Minute))
	sc, _ := schedule.Parse("1m")
	offsets := map[time.Duration]bool{}
	for _, id := range ids {
		off := sc.Offset(id)
		offsets[off] = true
		vs := f.verdicts(id)
		if len(vs) < 3 || len(vs) > 5 {
			t.Fatalf("%s: %d verdicts in 4 minutes", id, len(vs))
		}
		for i, v := range vs {
			slot := time.UnixMilli(v.GetSlotUnixMs()).UTC()
			if slot.Sub(base.Truncate(time.Minute))%time.Minute != off {
				t.Errorf("%s: slot %v is not at offset %v", id, slot, off)
			}
			if i > 0 && slot.Sub(time.UnixMilli(vs[i-1].GetSlotUnixMs())) != time.Minute {
				t.Errorf("%s: slots %v and %v are not one period apart", id, time.UnixMilli(vs[i-1].GetSlotUnixMs()), slot)
			}
		}
		for _, at := range f.prober.attempts(url(id)) {
			if at.Sub(base.Truncate(time.Minute))%time.Minute < off {
				t.Errorf("%s: an attempt at %v, before its slot", id, at)
			}
		}
	}
	if len(offsets) < 2 {
		t.Fatalf("three checks share one offset: %v", offsets)
	}
}

func TestCronChecksRunAtTheirSlots(t *testing.T) {
	f := newFixture(t)
	const id = "c0000000-0000-4000-8000-00000000000c"
	f.put(id, "*/2 * * * *", true, true)
	f.clock.Advance(45 * time.Second) // 12:00:45: the 12:00 slot was missed by more than MaxLate
	f.start(Options{})
	f.settle(time.Second, base.Add(5*time.Minute+30*time.Second))
	var slots []string
	for _, v := range f.verdicts(id) {
		slots = append(slots, time.UnixMilli(v.GetSlotUnixMs()).UTC().Format("15:04:05"))
	}
	if fmt.Sprint(slots) != "[12:02:00 12:04:00]" {
		t.Fatalf("slots %v", slots)
	}
}

func TestChangedCheckRunsAtOnce(t *testing.T) {
	f := newFixture(t)
	const id = "c0000000-0000-4000-8000-0000000000cc"
	f.start(Options{})
	f.put(id, "1h", true, true)
	f.waitFor("the new check's first execution", 0, func() bool { return len(f.verdicts(id)) == 1 })
	if v := f.verdicts(id)[0]; v.GetSlotUnixMs() != base.UnixMilli() || v.GetStatus() != state.ExecSuccess || v.GetAttempts() != 1 {
		t.Fatalf("first execution %v", v)
	}
	f.clock.Advance(3 * time.Second)
	f.put(id, "2h", true, false)
	f.waitFor("the changed check's execution", 0, func() bool { return len(f.verdicts(id)) == 2 })
	f.put(id, "2h", false, false) // disabled: never runs
	f.settle(time.Minute, base.Add(5*time.Hour))
	if n := len(f.prober.attempts(url(id))); n != 2 {
		t.Fatalf("%d attempts; a disabled check ran", n)
	}
	f.clock.Advance(2 * time.Second)
	f.put(id, "2h", true, false) // enabled again: runs at once
	f.waitFor("the enabled check's execution", 0, func() bool { return len(f.verdicts(id)) == 3 })
}

func TestNoCatchUpAfterAPause(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 20 {
		id := fmt.Sprintf("c0000000-0000-4000-8000-%012d", i)
		ids = append(ids, id)
		f.put(id, "30s", true, true)
	}
	// MaxLate is far shorter than the pause but spans several of settle's
	// steps (1 s of the fake clock each, 3 ms of real time): a loaded
	// machine's workers may take a few steps to pick up a slot.
	f.start(Options{MaxLate: 10 * time.Second})
	f.waitFor("the scheduler to schedule every check", 0, func() bool { return f.sched.Stats().Scheduled == len(ids) })
	f.clock.Advance(time.Hour) // 120 slots of each check pass at once
	time.Sleep(100 * time.Millisecond)
	for _, id := range ids {
		if n := len(f.prober.attempts(url(id))); n > 1 {
			t.Fatalf("%s ran %d times after the pause", id, n)
		}
	}
	before := f.sched.Stats().Runs
	f.settle(time.Second, f.clock.Now().Add(30*time.Second))
	if runs := f.sched.Stats().Runs - before; runs != uint64(len(ids)) {
		t.Fatalf("%d runs in the 30 s after the pause, want %d", runs, len(ids))
	}
}

func TestRetriesTransientFailures(t *testing.T) {
	f := newFixture(t)
	const ok, bad, broken = "c0000000-0000-4000-8000-0000000000a1", "c0000000-0000-4000-8000-0000000000a2", "c0000000-0000-4000-8000-0000000000a3"
	f.prober.result = func(u string, n int) probe.Result {
		transient := probe.Result{Err: &probe.Error{Kind: probe.KindStatus, Message: "status 500", Transient: true}, HTTP: &probe.HTTP{StatusCode: 500}}
		switch {
		case u == url(ok) && n <= 2, u == url(bad):
			return transient
		case u == url(broken):
			return probe.Result{Err: &probe.Error{Kind: probe.KindStatus, Message: "status 404"}, HTTP: &probe.HTTP{StatusCode: 404}}
		}
		return probe.Result{HTTP: &probe.HTTP{StatusCode: 200}}
	}
	reg := prometheus.NewRegistry()
	f.start(Options{Metrics: metrics.NewControl(reg).Checks})
	for _, id := range []string{ok, bad, broken} {
		f.put(id, "1h", true, true)
	}
	f.waitFor("three verdicts", 100*time.Millisecond, func() bool {
		return len(f.verdicts(ok)) == 1 && len(f.verdicts(bad)) == 1 && len(f.verdicts(broken)) == 1
	})
	// lookout_checks_runs_total counts the verdicts by status (just after
	// they are recorded).
	f.waitFor("the runs counted", 0, func() bool {
		want := `
# HELP lookout_checks_runs_total Check executions this node, as leader, ran to a recorded verdict, by status (success, failed).
# TYPE lookout_checks_runs_total counter
lookout_checks_runs_total{status="failed"} 2
lookout_checks_runs_total{status="success"} 1
`
		return testutil.GatherAndCompare(reg, strings.NewReader(want), "lookout_checks_runs_total") == nil
	})
	for _, tc := range []struct {
		id       string
		status   string
		attempts int64
	}{{ok, state.ExecSuccess, 3}, {bad, state.ExecFailed, 4}, {broken, state.ExecFailed, 1}} {
		v := f.verdicts(tc.id)[0]
		if v.GetStatus() != tc.status || v.GetAttempts() != tc.attempts {
			t.Errorf("%s: %s after %d attempts, want %s after %d", tc.id, v.GetStatus(), v.GetAttempts(), tc.status, tc.attempts)
		}
	}
	at := f.prober.attempts(url(bad))
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if gap := at[i+1].Sub(at[i]); gap < want {
			t.Errorf("retry %d after %v, want %v", i+1, gap, want)
		}
	}
}

func TestNewLeaderRunsTheDueSlotOnce(t *testing.T) {
	f := newFixture(t)
	const id = "c0000000-0000-4000-8000-0000000000b1"
	f.put(id, "1m", true, true)
	sc, _ := schedule.Parse("1m")
	slot := sc.NextFor(id, base)
	f.clock.Advance(slot.Sub(base) + 2*time.Second) // due 2 s ago, no leader ran it
	f.start(Options{})
	f.waitFor("the due slot's verdict", 0, func() bool { return len(f.verdicts(id)) == 1 })
	if got := f.verdicts(id)[0].GetSlotUnixMs(); got != slot.UnixMilli() {
		t.Fatalf("ran slot %v, want %v", time.UnixMilli(got), slot)
	}
	// Another leader a moment later finds the verdict and does not repeat it.
	f.stop()
	f.clock.Advance(time.Second)
	f.start(Options{})
	f.waitFor("the second term to schedule", 0, func() bool { return f.sched.Stats().Scheduled == 1 })
	time.Sleep(100 * time.Millisecond)
	if n := len(f.prober.attempts(url(id))); n != 1 {
		t.Fatalf("%d attempts of one slot", n)
	}
}

// TestBurstDrainsThroughBusyWorkers: more checks due at once than there
// are workers wait for a worker instead of losing their slot (as a new
// leader's burst of missed slots would), and none is skipped.
func TestBurstDrainsThroughBusyWorkers(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	f.prober.result = func(string, int) probe.Result {
		<-release
		return probe.Result{HTTP: &probe.HTTP{StatusCode: 200}}
	}
	f.start(Options{Workers: 1})
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = fmt.Sprintf("c0000000-0000-4000-8000-0000000000b%d", i)
		f.put(ids[i], "1h", true, true) // each runs at once, then in an hour
	}
	f.waitFor("the first attempt", 0, func() bool {
		n := 0
		for _, id := range ids {
			n += len(f.prober.attempts(url(id)))
		}
		return n == 1
	})
	time.Sleep(100 * time.Millisecond) // the scheduler takes in the other four meanwhile
	close(release)
	f.waitFor("a verdict of every check", 0, func() bool {
		for _, id := range ids {
			if len(f.verdicts(id)) != 1 {
				return false
			}
		}
		return true
	})
	if st := f.sched.Stats(); st.Skipped != 0 {
		t.Fatalf("%d slots skipped", st.Skipped)
	}
}

// TestRegionChecksAreLeftToAgents: the control plane runs only checks
// without regions: a check with regions is never probed
// by the scheduler, and one that gains regions stops being run, while one
// that loses them is run at once.
func TestRegionChecksAreLeftToAgents(t *testing.T) {
	f := newFixture(t)
	const own, agents = "c0000000-0000-4000-8000-0000000000a1", "c0000000-0000-4000-8000-0000000000a2"
	f.put(own, "1m", true, true)
	f.putRegions(agents, true, "eu-1", "us-1")
	f.start(Options{MaxLate: 10 * time.Second}) // see TestNoCatchUpAfterAPause
	f.settle(time.Second, base.Add(3*time.Minute))
	if n := len(f.verdicts(own)); n < 2 {
		t.Fatalf("the check without regions ran %d times in 3 minutes", n)
	}
	if n := len(f.prober.attempts(url(agents))); n != 0 {
		t.Fatalf("the control plane probed a check with regions %d times", n)
	}
	ran := len(f.prober.attempts(url(own)))
	f.putRegions(own, false, "eu-1")
	f.putRegions(agents, false)
	f.waitFor("the check without regions now", 0, func() bool { return len(f.verdicts(agents)) == 1 })
	f.settle(time.Second, f.clock.Now().Add(3*time.Minute))
	if n := len(f.prober.attempts(url(own))); n != ran {
		t.Fatalf("a check that gained regions ran %d more times", n-ran)
	}
}

// putRegions creates or replaces check id with a 1m schedule and regions.
func (f *fixture) putRegions(id string, create bool, regions ...string) {
	f.t.Helper()
	spec := &raftv1.MonitorSpec{Uuid: id, Kind: state.KindHTTPCheck, Name: id, Enabled: true, Schedule: "1m", Regions: regions,
		Config: &raftv1.CheckConfig{Url: url(id), Method: "GET", Timeout: 10, ExpectedStatus: new(int64(200))}}
	op := &raftv1.PutMonitors{AccountId: "a"}
	if create {
		op.Creates = append(op.Creates, spec)
	} else {
		op.Updates = append(op.Updates, spec)
	}
	f.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: op}})
}
