package ingest

import (
	"context"
	"testing"
	"time"

	"lookout/internal/bench"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// sleepCluster answers every batch after a fixed delay, as a raft apply
// would, without using the CPU meanwhile.
type sleepCluster struct{ delay time.Duration }

func (c sleepCluster) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	time.Sleep(c.delay)
	n := len(cmd.GetIngestBatch().GetEvents())
	res := &raftv1.Result{Status: raftv1.Status_STATUS_OK, Events: make([]*raftv1.EventResult, n)}
	for i := range res.Events {
		res.Events[i] = &raftv1.EventResult{}
	}
	return res, nil
}

// BenchmarkBatcherSubmit: 64 concurrent submitters (bench-ingest's
// connections) against applies of 2 ms. It reports the process's CPU time
// per event (cpu-µs/op), which is what the batcher's hand-offs cost: the
// wall time per event is set by the apply's delay.
func BenchmarkBatcherSubmit(b *testing.B) {
	bt := NewBatcher(BatcherOptions{Cluster: sleepCluster{delay: 2 * time.Millisecond}})
	bt.Start()
	defer bt.Stop()
	b.SetParallelism(32)
	start := bench.SelfCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ev := &raftv1.Event{Monitor: "job", EventType: "ping", Status: "complete"}
		for pb.Next() {
			if _, err := bt.Submit(context.Background(), ev); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((bench.SelfCPU()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	st := bt.Stats()
	b.ReportMetric(float64(st.Events)/float64(max(st.Batches, 1)), "events/batch")
}
