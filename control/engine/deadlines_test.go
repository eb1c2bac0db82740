package engine_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/control/controltest"
	"lookout/control/engine"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// fakeClock is the engine's clock and timer: time moves only by Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[chan time.Time]time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers[ch] = c.now.Add(d)
	return ch
}

// Advance moves the clock and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for ch, at := range c.timers {
		if !at.After(c.now) {
			ch <- c.now
			delete(c.timers, ch)
		}
	}
}

// waiting reports whether a timer is set for at: the engine is idle until
// then.
func (c *fakeClock) waiting(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.Equal(at) {
			return true
		}
	}
	return false
}

// harness is a real state with a Cluster applying straight to it, one
// account with a default channel, and a fake clock.
type harness struct {
	t       *testing.T
	store   *state.Store
	cluster *controltest.Cluster
	clock   *fakeClock
	acct    string
	t0      time.Time
}

func newHarness(t *testing.T) *harness {
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	t0 := time.Date(2026, time.March, 15, 12, 30, 0, 0, time.UTC)
	clock := &fakeClock{now: t0, timers: map[chan time.Time]time.Time{}}
	h := &harness{t: t, store: store, cluster: controltest.NewCluster(store, clock.Now), clock: clock, acct: uuid.NewString(), t0: t0}
	key := func(typ raftv1.KeyType) *raftv1.Key {
		return &raftv1.Key{Id: uuid.NewString(), AccountId: h.acct, Type: typ, Hash: []byte(uuid.NewString())}
	}
	h.apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: h.acct, Email: "owner@example.com", Plan: &raftv1.Plan{Name: "test"},
		IngestKey: key(raftv1.KeyType_KEY_TYPE_INGEST), ManagementKey: key(raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}})
	h.apply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: h.acct, ChannelId: "hook", Type: "webhook", Name: "hook", ConfigJson: []byte(`{}`), IsDefault: true,
	}}})
	return h
}

func (h *harness) apply(cmd *raftv1.Command) {
	h.t.Helper()
	res, err := h.cluster.Apply(context.Background(), cmd)
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		h.t.Fatalf("apply %v: %v %v", cmd, res, err)
	}
}

// monitor creates ping monitor name; interval 0 means none expected.
func (h *harness) monitor(name string, intervalSec, graceSec, timeoutSec int64) string {
	id := uuid.NewString()
	spec := &raftv1.MonitorSpec{Uuid: id, Kind: "ping", Name: name, Enabled: true, TimeoutSeconds: timeoutSec}
	if intervalSec > 0 {
		spec.ExpectedIntervalSeconds, spec.GraceSeconds = proto.Int64(intervalSec), proto.Int64(graceSec)
	}
	h.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: h.acct, Creates: []*raftv1.MonitorSpec{spec}}}})
	return id
}

// ping ingests a ping of monitor name at the clock's time.
func (h *harness) ping(name, status string) {
	h.apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: []*raftv1.Event{{
		AccountId: h.acct, Monitor: name, EventType: "ping", Status: status, ReceivedUnixMs: h.clock.Now().UnixMilli(),
	}}}}})
}

func (h *harness) engineState(id string) *statev1.EngineState {
	m, err := h.store.MonitorByUUID(id)
	if err != nil {
		h.t.Fatal(err)
	}
	return m.GetEngine()
}

// start runs an engine, as a new leader would; the returned func stops it
// and waits for Run to return.
func (h *harness) start() (*engine.Deadlines, func()) {
	e := engine.NewDeadlines(engine.DeadlineOptions{Cluster: h.cluster, State: h.store, Now: h.clock.Now, After: h.clock.After})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	stop := func() { cancel(); <-done }
	h.t.Cleanup(stop)
	return e, stop
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// settle gives the engine's goroutine a moment to act on what it should not.
func settle() { time.Sleep(20 * time.Millisecond) }

func TestMissedDeadlineFiresOnceAtItsDueTime(t *testing.T) {
	h := newHarness(t)
	id := h.monitor("backup", 90, 0, 0) // no grace: no late step before the miss
	h.ping("backup", "complete")
	due := h.t0.Add(90 * time.Second)
	e, _ := h.start()
	waitFor(t, "the deadline to be scheduled", func() bool { return h.clock.waiting(due) })

	h.clock.Advance(89 * time.Second)
	settle()
	if s := e.Stats(); s.Fired != 0 || s.Scheduled != 1 || h.engineState(id).GetState() != pingstate.Up {
		t.Fatalf("fired before its time: %+v %v", s, h.engineState(id))
	}
	h.clock.Advance(time.Second)
	waitFor(t, "the deadline to fire", func() bool { return e.Stats().Fired == 1 })
	if st := h.engineState(id); st.GetState() != pingstate.Down || st.GetLastAlert() != pingstate.AlertMissed || !st.GetMissedFired() {
		t.Fatalf("engine state after the deadline: %v", st)
	}
	alerts, err := h.store.PendingAlerts(0)
	if err != nil || len(alerts) != 1 || alerts[0].GetType() != pingstate.AlertMissed || alerts[0].GetMonitorUuid() != id || alerts[0].GetOccurredUnixMs() != due.UnixMilli() {
		t.Fatalf("alerts: %v %v", alerts, err)
	}
	waitFor(t, "the fired deadline to leave the heap", func() bool { return e.Stats().Scheduled == 0 })

	h.clock.Advance(10 * time.Minute)
	settle()
	if s := e.Stats(); s.Fired != 1 || s.Stale != 0 || s.Errors != 0 {
		t.Fatalf("stats after more time: %+v", s)
	}
}

func TestPingMovesTheDeadline(t *testing.T) {
	h := newHarness(t)
	h.monitor("backup", 90, 0, 0)
	h.ping("backup", "complete")
	e, _ := h.start()
	waitFor(t, "the first deadline", func() bool { return h.clock.waiting(h.t0.Add(90 * time.Second)) })

	h.clock.Advance(60 * time.Second)
	h.ping("backup", "complete")
	moved := h.t0.Add(150 * time.Second)
	waitFor(t, "the moved deadline", func() bool { return h.clock.waiting(moved) && e.Stats().Next.Equal(moved) })
	h.clock.Advance(30 * time.Second) // the old due time
	settle()
	if s := e.Stats(); s.Fired != 0 || s.Stale != 0 {
		t.Fatalf("the old deadline was proposed: %+v", s)
	}
	h.clock.Advance(60 * time.Second)
	waitFor(t, "the moved deadline to fire", func() bool { return e.Stats().Fired == 1 })
}

func TestRunTimeoutFires(t *testing.T) {
	h := newHarness(t)
	id := h.monitor("nightly", 0, 0, 600)
	h.ping("nightly", "run")
	e, _ := h.start()
	due := h.t0.Add(10 * time.Minute)
	waitFor(t, "the timeout", func() bool { return h.clock.waiting(due) })
	h.clock.Advance(10 * time.Minute)
	waitFor(t, "the timeout to fire", func() bool { return e.Stats().Fired == 1 })
	if st := h.engineState(id); st.GetState() != pingstate.Down || st.GetLastAlert() != pingstate.AlertTimeout || !st.GetTimeoutFired() {
		t.Fatalf("engine state after the timeout: %v", st)
	}
	waitFor(t, "an empty heap", func() bool { return e.Stats().Scheduled == 0 })
}

func TestDeadlineDueDuringAnElectionFiresOnceAcrossLeaders(t *testing.T) {
	h := newHarness(t)
	id := h.monitor("backup", 60, 0, 0)
	h.monitor("marker", 3600, 0, 0)
	h.ping("backup", "complete")
	h.ping("marker", "complete")
	h.clock.Advance(5 * time.Minute) // no leader meanwhile

	first, stop := h.start()
	waitFor(t, "the overdue deadline to fire at once", func() bool { return first.Stats().Fired == 1 })
	if st := h.engineState(id); st.GetLastAlert() != pingstate.AlertMissed {
		t.Fatalf("engine state: %v", st)
	}
	stop()

	second, _ := h.start()
	waitFor(t, "the new leader's rebuild", func() bool { return second.Stats().Scheduled == 1 })
	settle()
	if s := second.Stats(); s.Fired != 0 || s.Stale != 0 || s.InFlight != 0 || !s.Next.Equal(h.t0.Add(time.Hour)) {
		t.Fatalf("the new leader proposed the fired deadline again: %+v", s)
	}
	if alerts, _ := h.store.PendingAlerts(0); len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(alerts))
	}
}

func TestDeletedMonitorsDeadlineIsDropped(t *testing.T) {
	h := newHarness(t)
	id := h.monitor("backup", 60, 0, 0)
	h.ping("backup", "complete")
	e, _ := h.start()
	waitFor(t, "the deadline", func() bool { return e.Stats().Scheduled == 1 })
	h.apply(&raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{AccountId: h.acct, MonitorUuid: id}}})
	waitFor(t, "the deadline to go", func() bool { return e.Stats().Scheduled == 0 })
	h.clock.Advance(time.Hour)
	settle()
	if s := e.Stats(); s.Fired != 0 || s.Stale != 0 || s.Errors != 0 {
		t.Fatalf("stats: %+v", s)
	}
}

func TestFailedProposalIsRetried(t *testing.T) {
	h := newHarness(t)
	id := h.monitor("backup", 60, 0, 0)
	h.ping("backup", "complete")
	e, _ := h.start()
	waitFor(t, "the deadline", func() bool { return h.clock.waiting(h.t0.Add(time.Minute)) })

	h.cluster.FailApply(errors.New("no leader"))
	h.clock.Advance(time.Minute)
	waitFor(t, "a failed proposal", func() bool { return e.Stats().Errors >= 1 })
	retry := h.clock.Now().Add(250 * time.Millisecond)
	waitFor(t, "the retry timer", func() bool { return h.clock.waiting(retry) })
	if s := e.Stats(); s.Fired != 0 {
		t.Fatalf("stats: %+v", s)
	}
	h.cluster.FailApply(nil)
	h.clock.Advance(250 * time.Millisecond)
	waitFor(t, "the retried deadline to fire", func() bool { return e.Stats().Fired == 1 })
	if st := h.engineState(id); st.GetLastAlert() != pingstate.AlertMissed {
		t.Fatalf("engine state: %v", st)
	}
}

func TestLateWithinGraceThenMissed(t *testing.T) {
	h := newHarness(t)
	id := h.monitor("backup", 60, 30, 0)
	h.ping("backup", "complete")
	e, _ := h.start()
	waitFor(t, "the late deadline", func() bool { return h.clock.waiting(h.t0.Add(60 * time.Second)) })
	h.clock.Advance(60 * time.Second)
	waitFor(t, "the late step", func() bool { return e.Stats().Fired == 1 })
	if st := h.engineState(id); st.GetState() != pingstate.Late || st.GetLastAlert() != "" {
		t.Fatalf("after the interval: %v", st)
	}
	if alerts, _ := h.store.PendingAlerts(0); len(alerts) != 0 {
		t.Fatalf("the late step alerted: %v", alerts)
	}
	waitFor(t, "the missed deadline", func() bool { return h.clock.waiting(h.t0.Add(90 * time.Second)) })
	h.clock.Advance(30 * time.Second)
	waitFor(t, "the miss", func() bool { return e.Stats().Fired == 2 })
	if st := h.engineState(id); st.GetState() != pingstate.Down || st.GetLastAlert() != pingstate.AlertMissed {
		t.Fatalf("after interval and grace: %v", st)
	}
}

// overtaking applies a ping of monitor before the first FireDeadlines it is
// asked to apply, as a ping that reaches raft just ahead of the deadline
// would.
type overtaking struct {
	h       *harness
	monitor string
	once    sync.Once
}

func (o *overtaking) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if cmd.GetFireDeadlines() != nil {
		o.once.Do(func() { o.h.ping(o.monitor, "complete") })
	}
	return o.h.cluster.Apply(ctx, cmd)
}

// A deadline that a ping overtook is applied as a no-op, which the state
// says in the result's typed stale field: the engine counts it as stale,
// not as fired, and schedules the moved deadline.
func TestOvertakenDeadlineCountsAsStale(t *testing.T) {
	h := newHarness(t)
	h.monitor("backup", 60, 0, 0)
	h.ping("backup", "complete")
	e := engine.NewDeadlines(engine.DeadlineOptions{Cluster: &overtaking{h: h, monitor: "backup"}, State: h.store, Now: h.clock.Now, After: h.clock.After})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the deadline", func() bool { return h.clock.waiting(h.t0.Add(time.Minute)) })
	h.clock.Advance(time.Minute)
	waitFor(t, "the stale result", func() bool { return e.Stats().Stale == 1 })
	moved := h.t0.Add(2 * time.Minute)
	waitFor(t, "the moved deadline", func() bool { return h.clock.waiting(moved) })
	if s := e.Stats(); s.Fired != 0 || s.Errors != 0 {
		t.Fatalf("stats: %+v", s)
	}
}
