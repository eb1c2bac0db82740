package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"lookout/control/engine"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// commands records the deadlines of each FireDeadlines the engine proposes,
// and the most of them it had in flight at once.
type commands struct {
	h                  *harness
	mu                 sync.Mutex
	sizes              []int
	flying, mostFlying int
}

func (c *commands) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	fd := cmd.GetFireDeadlines()
	if fd == nil {
		return c.h.cluster.Apply(ctx, cmd) // the alive marks: not the deadlines' commands
	}
	c.mu.Lock()
	c.sizes = append(c.sizes, len(fd.GetDeadlines()))
	c.flying++
	c.mostFlying = max(c.mostFlying, c.flying)
	c.mu.Unlock()
	time.Sleep(time.Millisecond) // raft's round trip: the next commands queue meanwhile
	defer func() { c.mu.Lock(); c.flying--; c.mu.Unlock() }()
	return c.h.cluster.Apply(ctx, cmd)
}

// TestDeadlinesDueTogetherShareCommands: deadlines due at the same moment
// are proposed together, at most state.MaxFireDeadlines a command, and
// every one of them fires once.
func TestDeadlinesDueTogetherShareCommands(t *testing.T) {
	h := newHarness(t)
	const n = 3*state.MaxFireDeadlines + 5
	ids := make([]string, n)
	for i := range ids {
		ids[i] = h.monitor(fmt.Sprint("job-", i), 60, 0, 0)
		h.ping(fmt.Sprint("job-", i), "complete")
	}
	c := &commands{h: h}
	e := engine.NewDeadlines(engine.DeadlineOptions{Cluster: c, State: h.store, Now: h.clock.Now, After: h.clock.After, MaxInFlight: 2})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "the deadlines", func() bool { return h.clock.waiting(h.t0.Add(time.Minute)) })
	h.clock.Advance(time.Minute)
	waitFor(t, "every deadline fired", func() bool { return e.Stats().Fired == n })
	for _, id := range ids {
		if st := h.engineState(id); st.GetState() != pingstate.Down {
			t.Fatalf("monitor %s: %v", id, st)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, size := range c.sizes {
		if size < 1 || size > state.MaxFireDeadlines {
			t.Fatalf("a command of %d deadlines: %v", size, c.sizes)
		}
		total += size
	}
	if c.mostFlying > 2 {
		t.Fatalf("%d commands in flight at once, MaxInFlight 2", c.mostFlying)
	}
	if total != n || len(c.sizes) >= n/2 {
		t.Fatalf("%d deadlines in %d commands (%v): want %d in a few", total, len(c.sizes), c.sizes, n)
	}
	if s := e.Stats(); s.Stale != 0 || s.Errors != 0 || s.InFlight != 0 {
		t.Fatalf("stats: %+v", s)
	}
}
