package forward

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	"google.golang.org/protobuf/proto"

	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Forwarding events. One call is one ordered run of the control plane's
// group commits (one raft entry of up to 256 events after the other), so
// a backlog drained one call at a time waits for every entry in turn.
// While a backlog drains, the forwarder reads a window of up to Lanes
// batches and sends it over Lanes calls at once: the events of one monitor
// (account and name) always go in the same lane, in order, so each
// monitor's events are still applied in the order they were buffered;
// only events of different monitors may be applied in another order.
// The window is acknowledged once every call of it was answered; a failed
// call leaves the whole window buffered, and the events of the lanes that
// were stored come back as duplicates when it is sent again (stored once,
// by their event_id).

// events forwards the oldest window of events and acknowledges it.
func (f *Forwarder) events(ctx context.Context) (int, error) {
	window, err := f.o.Buffer.Events(f.o.Batch*f.o.Lanes, f.o.BatchBytes*f.o.Lanes)
	if err != nil {
		return 0, fmt.Errorf("read buffered events: %w", err)
	}
	if len(window) == 0 {
		return 0, nil
	}
	results := make([]*raftv1.EventResult, len(window))
	lanes := f.split(window)
	errs := make([]error, len(lanes))
	if len(lanes) == 1 {
		errs[0] = f.forwardLane(ctx, window, lanes[0], results)
	} else {
		var wg sync.WaitGroup
		for l, calls := range lanes {
			wg.Go(func() { errs[l] = f.forwardLane(ctx, window, calls, results) })
		}
		wg.Wait()
	}
	if err := errors.Join(errs...); err != nil {
		return len(window), err
	}

	stored := 0
	f.mu.Lock()
	for i, r := range results {
		if q := r.GetQuota(); q != nil {
			f.quotas[window[i].Event.GetAccountId()] = q
		}
	}
	f.mu.Unlock()
	for i, r := range results {
		switch o := r.GetOutcome(); o {
		case raftv1.EventOutcome_EVENT_OUTCOME_STORED, raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE:
			stored++
		default:
			ev := window[i].Event
			f.refEvents.Add(1)
			f.count(KindEvent, refusal(o), 1)
			f.o.Logger.Warn("the control plane refused a buffered ping; it is dropped from the buffer", "event_id", ev.GetEventId(),
				"account", ev.GetAccountId(), "monitor", ev.GetMonitor(), "outcome", o.String())
		}
	}
	f.fwdEvents.Add(uint64(stored))
	if f.o.Metrics != nil {
		f.o.Metrics.Forwarded(KindEvent, stored)
	}
	if err := f.o.Buffer.AckEvents(window[len(window)-1].Seq); err != nil {
		return len(window), fmt.Errorf("acknowledge %d forwarded events: %w", len(window), err)
	}
	return len(window), nil
}

// split cuts a window into lanes (a monitor's events all in one lane,
// lanes kept in window order) and each lane into calls of at most Batch
// events and BatchBytes bytes; each call is a list of positions in the
// window. A window of one batch is one call.
func (f *Forwarder) split(window []EventEntry) [][][]int {
	n := f.o.Lanes
	if len(window) <= f.o.Batch {
		n = 1
	}
	type lane struct {
		calls [][]int
		bytes int // of the last call
	}
	lanes := make([]lane, n)
	for i, e := range window {
		l := &lanes[laneOf(e.Event, n)]
		size := proto.Size(e.Event)
		last := len(l.calls) - 1
		if last < 0 || len(l.calls[last]) >= f.o.Batch || l.bytes+size > f.o.BatchBytes {
			l.calls = append(l.calls, nil)
			l.bytes = 0
			last++
		}
		l.calls[last] = append(l.calls[last], i)
		l.bytes += size
	}
	var out [][][]int
	for _, l := range lanes {
		if len(l.calls) > 0 {
			out = append(out, l.calls)
		}
	}
	return out
}

// laneOf is the lane of an event's monitor among n.
func laneOf(ev *raftv1.Event, n int) int {
	if n == 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(ev.GetAccountId()))
	h.Write([]byte{0})
	h.Write([]byte(ev.GetMonitor()))
	return int(h.Sum32() % uint32(n))
}

// forwardLane makes the calls of one lane in order and puts each answer
// at its event's position in results; it stops at the first failure.
func (f *Forwarder) forwardLane(ctx context.Context, window []EventEntry, calls [][]int, results []*raftv1.EventResult) error {
	for _, call := range calls {
		req := &agentv1.ForwardEventsRequest{Events: make([]*raftv1.Event, len(call))}
		for j, i := range call {
			req.Events[j] = window[i].Event
		}
		resp, err := f.o.Control.ForwardEvents(ctx, req)
		if err != nil {
			return fmt.Errorf("forward %d events: %w", len(call), err)
		}
		res := resp.GetResults()
		if len(res) != len(call) {
			return fmt.Errorf("forward %d events: the control plane answered %d results; the events stay buffered", len(call), len(res))
		}
		for j, i := range call {
			results[i] = res[j]
		}
	}
	return nil
}
