package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"lookout/cluster"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// echoCluster answers each event with a result naming it (monitor_uuid =
// the event's monitor), so a waiter can tell its own result. Before
// answering, Apply waits for gate (when set) or for its context.
type echoCluster struct {
	gate    chan struct{}
	failNth int // 1-based call to fail; 0: none

	mu       sync.Mutex
	batches  [][]*raftv1.Event
	active   int
	maxActiv int
}

var errApply = errors.New("apply failed")

func (c *echoCluster) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	c.mu.Lock()
	events := cmd.GetIngestBatch().GetEvents()
	c.batches = append(c.batches, events)
	n := len(c.batches)
	c.active++
	c.maxActiv = max(c.maxActiv, c.active)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.active--
		c.mu.Unlock()
	}()
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if n == c.failNth {
		return nil, errApply
	}
	res := &raftv1.Result{Status: raftv1.Status_STATUS_OK}
	for _, ev := range events {
		res.Events = append(res.Events, &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_STORED, MonitorUuid: ev.GetMonitor()})
	}
	return res, nil
}

func (c *echoCluster) calls() [][]*raftv1.Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]*raftv1.Event(nil), c.batches...)
}

// waitCalls waits until Apply was called n times.
func (c *echoCluster) waitCalls(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(c.calls()) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d Apply calls, want %d", len(c.calls()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func startBatcher(t *testing.T, c Applier, s BatchSettings) *Batcher {
	b := NewBatcher(BatcherOptions{Cluster: c, RetentionCount: 5, BatchSettings: s})
	b.Start()
	t.Cleanup(b.Stop)
	return b
}

// submitAll submits n events (monitors m0, m1, ...) concurrently and
// returns each one's result and error by index.
func submitAll(b *Batcher, n int, message string) ([]*raftv1.EventResult, []error) {
	results := make([]*raftv1.EventResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = b.Submit(context.Background(), &raftv1.Event{Monitor: fmt.Sprintf("m%d", i), Message: message})
		})
	}
	wg.Wait()
	return results, errs
}

func TestBatcherGroupsEvents(t *testing.T) {
	c := &echoCluster{}
	b := startBatcher(t, c, BatchSettings{MaxDelay: 5 * time.Millisecond})
	const n = 500
	results, errs := submitAll(b, n, "")
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("event %d: %v", i, errs[i])
		}
		if got := results[i].GetMonitorUuid(); got != fmt.Sprintf("m%d", i) {
			t.Fatalf("event %d got the result of %s", i, got)
		}
	}
	calls := c.calls()
	total := 0
	for _, batch := range calls {
		total += len(batch)
	}
	if total != n || len(calls) >= n/2 {
		t.Fatalf("%d events in %d Apply calls; want %d events in fewer than %d", total, len(calls), n, n/2)
	}
	if st := b.Stats(); st.Batches != uint64(len(calls)) || st.Events != n || st.Errors != 0 || st.FailedEvents != 0 {
		t.Fatalf("stats %+v, %d calls", st, len(calls))
	}
	t.Logf("%d events in %d batches", n, len(calls))
}

func TestBatcherMaxBatch(t *testing.T) {
	c := &echoCluster{}
	b := startBatcher(t, c, BatchSettings{MaxBatch: 10, MaxDelay: time.Hour})
	_, errs := submitAll(b, 100, "")
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// With an hour of delay only full batches are proposed.
	for _, batch := range c.calls() {
		if len(batch) != 10 {
			t.Fatalf("batch of %d events, want 10", len(batch))
		}
	}
}

func TestBatcherMaxBytes(t *testing.T) {
	c := &echoCluster{}
	const maxBytes = 5000
	b := startBatcher(t, c, BatchSettings{MaxBytes: maxBytes, MaxDelay: 20 * time.Millisecond})
	// An event larger than MaxBytes goes in a batch alone.
	bigErr := make(chan error, 1)
	go func() {
		_, err := b.Submit(context.Background(), &raftv1.Event{Monitor: "big", Message: strings.Repeat("x", 2*maxBytes)})
		bigErr <- err
	}()
	_, errs := submitAll(b, 50, strings.Repeat("x", 1000))
	if err := <-bigErr; err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, batch := range c.calls() {
		size := proto.Size(&raftv1.IngestBatch{Events: batch})
		if len(batch) > 1 && size > maxBytes {
			t.Fatalf("batch of %d events is %d bytes, over %d", len(batch), size, maxBytes)
		}
		for _, ev := range batch {
			if ev.GetMonitor() == "big" && len(batch) != 1 {
				t.Fatalf("the big event shares a batch of %d", len(batch))
			}
		}
		if len(batch) > 4 {
			t.Fatalf("batch of %d events of 1 KB each", len(batch))
		}
	}
}

// TestBatcherApplyError: a failed Apply fails every event of its batch and
// no other.
func TestBatcherApplyError(t *testing.T) {
	c := &echoCluster{failNth: 1}
	b := startBatcher(t, c, BatchSettings{MaxBatch: 3, MaxDelay: time.Hour})
	results, errs := submitAll(b, 9, "")
	failed := map[string]bool{}
	for _, ev := range c.calls()[0] {
		failed[ev.GetMonitor()] = true
	}
	for i := range 9 {
		name := fmt.Sprintf("m%d", i)
		switch {
		case failed[name] && !errors.Is(errs[i], errApply):
			t.Errorf("%s of the failed batch: %v", name, errs[i])
		case !failed[name] && (errs[i] != nil || results[i].GetMonitorUuid() != name):
			t.Errorf("%s of a good batch: %v, %v", name, errs[i], results[i])
		}
	}
	if st := b.Stats(); st.Batches != 3 || st.Events != 9 || st.Errors != 1 || st.FailedEvents != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBatcherInFlight: at most MaxInFlight batches apply at once, and the
// next batch keeps filling while they do.
func TestBatcherInFlight(t *testing.T) {
	c := &echoCluster{gate: make(chan struct{})}
	b := startBatcher(t, c, BatchSettings{MaxInFlight: 2, MaxDelay: time.Millisecond})
	var wg sync.WaitGroup
	var failures atomic.Int32
	submit := func(name string) {
		wg.Go(func() {
			if _, err := b.Submit(context.Background(), &raftv1.Event{Monitor: name}); err != nil {
				failures.Add(1)
			}
		})
	}
	submit("first")
	c.waitCalls(t, 1)
	submit("second")
	c.waitCalls(t, 2)
	for i := range 8 {
		submit(fmt.Sprintf("later%d", i))
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(c.calls()); n != 2 {
		t.Fatalf("%d batches applying, want 2", n)
	}
	close(c.gate)
	wg.Wait()
	calls := c.calls()
	if failures.Load() != 0 || len(calls) != 3 || len(calls[2]) != 8 || c.maxActiv != 2 {
		t.Fatalf("%d failures, %d batches (last of %d), %d at once", failures.Load(), len(calls), len(calls[len(calls)-1]), c.maxActiv)
	}
}

// TestBatcherWaiterContext: a waiter whose context ends stops waiting; its
// event is still proposed.
func TestBatcherWaiterContext(t *testing.T) {
	c := &echoCluster{gate: make(chan struct{})}
	b := startBatcher(t, c, BatchSettings{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.Submit(ctx, &raftv1.Event{Monitor: "impatient"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	close(c.gate)
	c.waitCalls(t, 1)
	if got := c.calls()[0][0].GetMonitor(); got != "impatient" {
		t.Fatalf("applied %s", got)
	}
}

// TestBatcherStop: Stop fails the events waiting for a batch and those
// being applied with cluster.ErrShutdown; later Submits fail alike.
func TestBatcherStop(t *testing.T) {
	c := &echoCluster{gate: make(chan struct{})}
	b := NewBatcher(BatcherOptions{Cluster: c, BatchSettings: BatchSettings{MaxInFlight: 1, MaxDelay: time.Millisecond}})
	if _, err := b.Submit(context.Background(), &raftv1.Event{}); !errors.Is(err, cluster.ErrShutdown) {
		t.Fatalf("Submit before Start: %v", err)
	}
	b.Start()
	errs := make(chan error, 2)
	go func() {
		_, err := b.Submit(context.Background(), &raftv1.Event{Monitor: "applying"})
		errs <- err
	}()
	c.waitCalls(t, 1)
	go func() {
		_, err := b.Submit(context.Background(), &raftv1.Event{Monitor: "waiting"})
		errs <- err
	}()
	time.Sleep(20 * time.Millisecond) // "waiting" is collected; no slot is free
	b.Stop()
	for range 2 {
		if err := <-errs; !errors.Is(err, cluster.ErrShutdown) {
			t.Fatalf("err %v, want ErrShutdown", err)
		}
	}
	if _, err := b.Submit(context.Background(), &raftv1.Event{}); !errors.Is(err, cluster.ErrShutdown) {
		t.Fatalf("Submit after Stop: %v", err)
	}
	if n := len(c.calls()); n != 1 {
		t.Fatalf("%d Apply calls, want 1", n)
	}
	b.Stop() // a second Stop does nothing
}

func TestBatcherRetention(t *testing.T) {
	var got atomic.Int64
	b := startBatcher(t, clusterFunc(func(cmd *raftv1.Command) (*raftv1.Result, error) {
		got.Store(cmd.GetIngestBatch().GetRetentionCount())
		return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Events: []*raftv1.EventResult{{}}}, nil
	}), BatchSettings{})
	if _, err := b.Submit(context.Background(), &raftv1.Event{}); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 5 {
		t.Fatalf("retention_count %d, want 5", got.Load())
	}
}

// clusterFunc is a Cluster made of a function.
type clusterFunc func(*raftv1.Command) (*raftv1.Result, error)

func (f clusterFunc) Apply(_ context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	return f(cmd)
}

// TestSubmitGroupStaysWholeAndInOrder: groups submitted while single
// events stream in each land in one batch, contiguous and in order, with
// their results in order; a group never shares a batch beyond MaxBatch.
func TestSubmitGroupStaysWholeAndInOrder(t *testing.T) {
	c := &echoCluster{}
	b := NewBatcher(BatcherOptions{Cluster: c, BatchSettings: BatchSettings{MaxBatch: 10, MaxDelay: time.Millisecond}})
	b.Start()
	defer b.Stop()
	ctx := context.Background()
	stop := make(chan struct{})
	var singles sync.WaitGroup
	for w := range 4 {
		singles.Add(1)
		go func() {
			defer singles.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := b.Submit(ctx, &raftv1.Event{Monitor: fmt.Sprintf("s%d-%d", w, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for g := range 20 {
		var evs []*raftv1.Event
		for i := range 1 + g%10 {
			evs = append(evs, &raftv1.Event{Monitor: fmt.Sprintf("g%d-%d", g, i)})
		}
		res, err := b.SubmitGroup(ctx, evs)
		if err != nil || len(res) != len(evs) {
			t.Fatalf("group %d: %d results, %v", g, len(res), err)
		}
		for i, r := range res {
			if r.GetMonitorUuid() != evs[i].GetMonitor() {
				t.Fatalf("group %d: result %d is %s's", g, i, r.GetMonitorUuid())
			}
		}
	}
	close(stop)
	singles.Wait()
	for _, batch := range c.calls() {
		if len(batch) > 10 {
			t.Fatalf("a batch of %d events, MaxBatch 10", len(batch))
		}
		// A group's events are contiguous and in order within its batch.
		var names []string
		for _, ev := range batch {
			if strings.HasPrefix(ev.GetMonitor(), "g") {
				names = append(names, ev.GetMonitor())
			}
		}
		for i := 1; i < len(names); i++ {
			var g1, i1, g2, i2 int
			fmt.Sscanf(names[i-1], "g%d-%d", &g1, &i1)
			fmt.Sscanf(names[i], "g%d-%d", &g2, &i2)
			if g1 != g2 || i2 != i1+1 {
				t.Fatalf("batch holds %v: a group split or out of order", names)
			}
		}
		if len(names) > 0 {
			var g, first int
			fmt.Sscanf(names[0], "g%d-%d", &g, &first)
			if first != 0 || len(names) != 1+g%10 {
				t.Fatalf("batch holds %v: not all of group %d", names, g)
			}
		}
	}
}
