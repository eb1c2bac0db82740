package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster/clustertest"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// BenchmarkApply measures acknowledged writes through a 3-node cluster:
// each op is one command committed on a majority and applied. "leader"
// proposes on the leader, "follower" pays the forwarding hop too. Run with
// -cpu to vary the number of concurrent writers (RunParallel uses GOMAXPROCS
// goroutines, times SetParallelism).
func BenchmarkApply(b *testing.B) {
	for _, where := range []string{"leader", "follower"} {
		b.Run(where, func(b *testing.B) {
			c := clustertest.NewCluster(b, 3)
			n := c.Leader(5 * time.Second)
			if where == "follower" {
				n = c.Follower()
			}
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					res, err := n.Apply(ctx, createAccount(uuid.NewString()))
					cancel()
					if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
						b.Errorf("apply: %v %v", res, err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}
