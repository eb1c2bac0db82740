package alert

import (
	"context"
	"fmt"
	"sync"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// recordBatches bounds the RecordDeliveries commands in flight at once.
const recordBatches = 4

// recorder records delivery outcomes through raft, many in one command: a
// record waits in a queue while recordBatches commands are in flight, and
// the caller whose command returns takes what queued meanwhile (up to
// state.MaxRecordDeliveries a command), as the ingest batcher does for
// pings. So a burst of deliveries costs a raft entry per batch of
// outcomes, not per outcome, and a lone outcome is proposed at once.
type recorder struct {
	apply func(context.Context, *raftv1.Command) (*raftv1.Result, error)

	mu     sync.Mutex
	queue  []*record
	flying int
}

// record is one outcome waiting for its result.
type record struct {
	rec  *raftv1.RecordDelivery
	ctx  context.Context
	res  *raftv1.Result
	err  error
	done chan struct{}
}

// record proposes rec, with others queued meanwhile, and returns its own
// result. The command that carries it waits as long as the context of its
// records that may wait longest (propose); ctx is rec's.
func (r *recorder) record(ctx context.Context, rec *raftv1.RecordDelivery) (*raftv1.Result, error) {
	p := &record{rec: rec, ctx: ctx, done: make(chan struct{})}
	r.mu.Lock()
	r.queue = append(r.queue, p)
	r.mu.Unlock()
	r.flush()
	<-p.done
	return p.res, p.err
}

// flush proposes what is queued while fewer than recordBatches commands are
// in flight.
func (r *recorder) flush() {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 || r.flying >= recordBatches {
			r.mu.Unlock()
			return
		}
		n := min(len(r.queue), state.MaxRecordDeliveries)
		batch := r.queue[:n:n]
		r.queue = r.queue[n:]
		r.flying++
		r.mu.Unlock()
		r.propose(batch)
		r.mu.Lock()
		r.flying--
		r.mu.Unlock()
	}
}

// propose applies batch as one RecordDeliveries and hands each record its
// item of the result. The command waits as long as the record that may
// wait longest (a delivered one outlives a lost leadership: it spares the
// receiver a repeat).
func (r *recorder) propose(batch []*record) {
	recs := make([]*raftv1.RecordDelivery, len(batch))
	ctx := batch[0].ctx
	for i, p := range batch {
		recs[i] = p.rec
		if p.rec.GetDelivered() {
			ctx = p.ctx
		}
	}
	res, err := r.apply(ctx, &raftv1.Command{Op: &raftv1.Command_RecordDeliveries{RecordDeliveries: &raftv1.RecordDeliveries{Records: recs}}})
	items := res.GetItems()
	for i, p := range batch {
		switch {
		case err != nil:
			p.err = err
		case res.GetStatus() != raftv1.Status_STATUS_OK:
			p.res = res
		case len(items) != len(batch):
			p.err = fmt.Errorf("record deliveries: %d results for %d records", len(items), len(batch))
		default:
			p.res = items[i]
		}
		close(p.done)
	}
}
