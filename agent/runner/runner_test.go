package runner_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lookout/agent/agenttest"
	"lookout/agent/assign"
	"lookout/agent/runner"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/schedule"
)

// clock is a manual clock: After fires when Advance passes its time.
type clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newClock(t time.Time) *clock { return &clock{now: t} }

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
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// owner is a switchable ownership; it keeps the tokens it was last
// asked about.
type owner struct {
	no     atomic.Bool
	tokens atomic.Value // []string
}

func (o *owner) Owns(_ string, tokens []string) bool {
	o.tokens.Store(tokens)
	return !o.no.Load()
}

// target is an HTTP endpoint that answers the statuses of script in turn
// (then the last one), counting requests.
type target struct {
	srv    *httptest.Server
	hits   atomic.Int64
	script []int
}

func newTarget(t *testing.T, script ...int) *target {
	tg := &target{script: script}
	tg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(tg.hits.Add(1))
		w.WriteHeader(tg.script[min(n, len(tg.script))-1])
		w.Write([]byte("hello from the target"))
	}))
	t.Cleanup(tg.srv.Close)
	return tg
}

func httpCheck(id, url, sched string, version uint64) *agentv1.Check {
	return &agentv1.Check{Id: id, Version: version, AccountId: "acc1", Name: id, Kind: "http_check", Schedule: sched,
		Config: &raftv1.CheckConfig{Url: url, Timeout: 5}}
}

type harness struct {
	store *assign.Store
	buf   *agenttest.Buffer
	own   *owner
	r     *runner.Runner
}

func start(t *testing.T, o runner.Options, initial ...*agentv1.Check) *harness {
	t.Helper()
	st, err := assign.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(initial) > 0 {
		if _, err := st.Apply(&agentv1.AssignmentsResponse{Region: "eu-1", Checks: initial, Synced: true}); err != nil {
			t.Fatal(err)
		}
		<-st.Changed()
	}
	h := &harness{store: st, buf: agenttest.NewBuffer(), own: &owner{}}
	o.Checks, o.Owner, o.Sink, o.Agent = st, h.own, h.buf, "edge-1"
	o.Region = st.Region
	h.r = runner.New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *harness) put(t *testing.T, c *agentv1.Check) {
	t.Helper()
	if _, err := h.store.Apply(&agentv1.AssignmentsResponse{Checks: []*agentv1.Check{c}}); err != nil {
		t.Fatal(err)
	}
}

// waitResults waits up to 10 s for n buffered verdicts.
func (h *harness) waitResults(t *testing.T, n int) []*raftv1.Execution {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := h.buf.ResultsHeld()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d verdicts buffered, want %d (stats %+v)", len(got), n, h.r.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settle gives the runner's goroutine time to act on a clock change.
func settle() { time.Sleep(50 * time.Millisecond) }

// waitStats waits up to 10 s for the runner's counters to satisfy cond,
// then lets it finish the loop it is in (setting its next timer).
func (h *harness) waitStats(t *testing.T, what string, cond func(runner.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(h.r.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %+v", what, h.r.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	settle()
}

// TestNewCheckRunsAtOnceWithRetries: a check added while the agent runs
// is run at once; a transient failure (503) is retried, and the verdict
// is buffered with what the last attempt saw.
func TestNewCheckRunsAtOnceWithRetries(t *testing.T) {
	tg := newTarget(t, 503, 503, 200)
	h := start(t, runner.Options{RetryDelays: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}})
	before := time.Now()
	h.put(t, httpCheck("c1", tg.srv.URL, "1h", 1))
	ex := h.waitResults(t, 1)[0]
	if ex.GetStatus() != "success" || ex.GetAttempts() != 3 || tg.hits.Load() != 3 {
		t.Fatalf("verdict %v after %d requests", ex, tg.hits.Load())
	}
	if ex.GetCheckUuid() != "c1" || ex.GetAccountId() != "acc1" || ex.GetAgent() != "edge-1" || ex.GetHttp().GetStatusCode() != 200 || ex.GetError() != "" {
		t.Fatalf("verdict %v", ex)
	}
	slot := time.UnixMilli(ex.GetSlotUnixMs())
	if slot.Before(before.Add(-time.Millisecond)) || time.Since(slot) > 5*time.Second || ex.GetFinishedUnixMs() < ex.GetStartedUnixMs() {
		t.Fatalf("slot %s, started %d, finished %d", slot, ex.GetStartedUnixMs(), ex.GetFinishedUnixMs())
	}
}

// TestFailures: a 5xx on every attempt fails after 3 retries; a wrong
// non-5xx status fails at once.
func TestFailures(t *testing.T) {
	down := newTarget(t, 503)
	wrong := newTarget(t, 404)
	h := start(t, runner.Options{RetryDelays: []time.Duration{5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}})
	h.put(t, httpCheck("down", down.srv.URL, "1h", 1))
	h.put(t, httpCheck("wrong", wrong.srv.URL, "1h", 1))
	got := map[string]*raftv1.Execution{}
	for _, ex := range h.waitResults(t, 2) {
		got[ex.GetCheckUuid()] = ex
	}
	if ex := got["down"]; ex.GetStatus() != "failed" || ex.GetAttempts() != 4 || ex.GetErrorKind() != "unexpected_status" || down.hits.Load() != 4 {
		t.Fatalf("down: %v after %d requests", ex, down.hits.Load())
	}
	if ex := got["wrong"]; ex.GetStatus() != "failed" || ex.GetAttempts() != 1 || wrong.hits.Load() != 1 {
		t.Fatalf("wrong: %v after %d requests", ex, wrong.hits.Load())
	}
}

// TestSchedule: checks held at start run on their slots (not at once);
// a changed check runs at once; a slot not owned is left to another
// agent, and the new owner starts on the next slot; a slot missed by
// more than MaxLate is not run late.
func TestSchedule(t *testing.T) {
	tg := newTarget(t, 200)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	c := httpCheck("c1", tg.srv.URL, "1m", 1)
	h := start(t, runner.Options{Now: clk.Now, After: clk.After, MaxLate: 30 * time.Second}, c)
	sc, _ := schedule.Parse("1m")
	slot1 := sc.NextFor("c1", t0)

	settle()
	if n := len(h.buf.ResultsHeld()); n != 0 {
		t.Fatalf("a check held at start ran at once (%d verdicts)", n)
	}
	clk.Advance(slot1.Sub(t0))
	if ex := h.waitResults(t, 1)[0]; ex.GetSlotUnixMs() != slot1.UnixMilli() {
		t.Fatalf("slot %d, want %d", ex.GetSlotUnixMs(), slot1.UnixMilli())
	}

	// Another member owns the check for the next slot.
	h.own.no.Store(true)
	settle()
	clk.Advance(time.Minute)
	h.waitStats(t, "a slot not owned", func(st runner.Stats) bool { return st.NotOwned == 1 })
	if n := len(h.buf.ResultsHeld()); n != 1 {
		t.Fatalf("a slot not owned ran: %d verdicts", n)
	}
	// Ownership comes back: the next slot runs.
	h.own.no.Store(false)
	clk.Advance(time.Minute)
	if ex := h.waitResults(t, 2)[1]; ex.GetSlotUnixMs() != slot1.Add(2*time.Minute).UnixMilli() {
		t.Fatalf("slot %d, want %d", ex.GetSlotUnixMs(), slot1.Add(2*time.Minute).UnixMilli())
	}

	// A change runs at once, on its own slot (now).
	settle()
	changed := httpCheck("c1", tg.srv.URL, "1m", 2)
	changed.Config.Timeout = 6
	h.put(t, changed)
	ex := h.waitResults(t, 3)[2]
	if now := clk.Now(); ex.GetSlotUnixMs() != now.UnixMilli() {
		t.Fatalf("changed check's slot %d, want now %d", ex.GetSlotUnixMs(), now.UnixMilli())
	}

	// The agent stalls past a slot by more than MaxLate: that slot is
	// skipped, the next runs.
	settle()
	skipped := h.r.Stats().Skipped
	next := sc.NextFor("c1", clk.Now())
	clk.Advance(next.Sub(clk.Now()) + 40*time.Second)
	h.waitStats(t, "a missed slot", func(st runner.Stats) bool { return st.Skipped == skipped+1 })
	if n := len(h.buf.ResultsHeld()); n != 3 {
		t.Fatalf("a missed slot ran late: %d verdicts", n)
	}
	clk.Advance(20 * time.Second)
	if ex := h.waitResults(t, 4)[3]; ex.GetSlotUnixMs() != next.Add(time.Minute).UnixMilli() {
		t.Fatalf("after the missed slot ran %d, want %d", ex.GetSlotUnixMs(), next.Add(time.Minute).UnixMilli())
	}

	// A removed check runs no more.
	if _, err := h.store.Apply(&agentv1.AssignmentsResponse{RemovedChecks: []string{"c1"}}); err != nil {
		t.Fatal(err)
	}
	h.waitStats(t, "the removal", func(st runner.Stats) bool { return st.Scheduled == 0 })
	clk.Advance(5 * time.Minute)
	settle()
	if n := len(h.buf.ResultsHeld()); n != 4 || h.r.Stats().Scheduled != 0 {
		t.Fatalf("a removed check: %d verdicts, stats %+v", n, h.r.Stats())
	}
}

// TestTokensChangeIsNoRun: a check re-sent because the tokens that may
// run it changed (an agent token of the region made or revoked) does not
// run at once; its next slot asks ownership with the new tokens.
func TestTokensChangeIsNoRun(t *testing.T) {
	tg := newTarget(t, 200)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := newClock(t0)
	c := httpCheck("c1", tg.srv.URL, "1m", 1)
	c.Tokens = []string{"tok-a"}
	h := start(t, runner.Options{Now: clk.Now, After: clk.After, MaxLate: 30 * time.Second}, c)
	settle()
	moved := httpCheck("c1", tg.srv.URL, "1m", 2)
	moved.Tokens = []string{"tok-a", "tok-b"}
	h.put(t, moved)
	settle()
	if n := len(h.buf.ResultsHeld()); n != 0 {
		t.Fatalf("a change of tokens ran the check at once (%d verdicts)", n)
	}
	sc, _ := schedule.Parse("1m")
	clk.Advance(sc.NextFor("c1", t0).Sub(t0))
	h.waitResults(t, 1)
	if got, _ := h.own.tokens.Load().([]string); len(got) != 2 || got[1] != "tok-b" {
		t.Fatalf("ownership asked with tokens %v", got)
	}
}
