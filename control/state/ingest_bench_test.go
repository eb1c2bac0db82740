package state

import (
	"cmp"
	"fmt"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// BenchmarkIngestBatch applies IngestBatch entries of 256 events spread over
// the 1,000 ping monitors of one account: each job sends run then complete
// (half the events each), with retention trimming in its steady state
// (retention 50) and a request id per entry, as the cluster proposes them.
// The Badger options are the production ones; the plan lets pings create
// the 1,000 monitors in the first minute. entries/call is how many
// entries one ApplyBatch gets (raft hands the FSM what has committed). The
// last case has the shape of `make bench-ingest` on one node: batches of 30
// completes from 8 accounts.
func BenchmarkIngestBatch(b *testing.B) {
	for _, bc := range []struct {
		name      string
		perCall   int
		series    bool
		eventIDs  bool
		retention int64
		perBatch  int  // events per entry (0: IngestBatchMaxEvents)
		accounts  int  // accounts the events spread over (0: 1)
		complete  bool // every event a complete with duration, exit code and message (no runs)
	}{
		{"series/entries=1", 1, true, false, 50, 0, 0, false},
		{"series/entries=8", 8, true, false, 50, 0, 0, false},
		{"no series/entries=8", 8, false, false, 50, 0, 0, false},
		{"series+event ids/entries=8", 8, true, true, 50, 0, 0, false},
		// The shape of make bench-ingest on one node: ~30 completes per
		// batch from 8 accounts, one or two batches per apply.
		{"bench-ingest shape/30 events, 8 accounts/entries=2", 2, false, false, 50, 30, 8, true},
		// The shape of make bench-ingest NODES=3: ~9 events per batch,
		// each node applying one to three batches at a time.
		{"3-node shape/8 events, 8 accounts/entries=1", 1, false, false, 50, 8, 8, true},
		{"3-node shape/8 events, 8 accounts/entries=3", 3, false, false, 50, 8, 8, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := Open(Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			perBatch, accounts := cmp.Or(bc.perBatch, IngestBatchMaxEvents), cmp.Or(bc.accounts, 1)
			var setup []*raftv1.Command
			for a := range accounts {
				id := fmt.Sprint("acct", a)
				setup = append(setup, newAccount(id), uncapped(id), createKey(key(id, "ik", raftv1.KeyType_KEY_TYPE_INGEST)))
			}
			s.ApplyBatch(entries(1, setup...))
			const monitors = 1000
			names := make([]string, monitors)
			for i := range names {
				names[i] = fmt.Sprintf("job-%04d", i)
			}
			j := 0 // event number
			next := func() *raftv1.Command {
				evs := make([]*raftv1.Event, perBatch)
				for i := range evs {
					run := j / 2
					status := "run"
					if j%2 == 1 {
						status = "complete"
					}
					ev := &raftv1.Event{AccountId: fmt.Sprint("acct", j%accounts), Monitor: names[run%monitors], EventType: "ping", Status: status,
						Host: "worker-1", ReceivedUnixMs: t0 + int64(j), KeyId: "ik"}
					if bc.complete {
						d, code, msg := 1.25, int64(0), "backup done"
						ev.Status, ev.Duration, ev.ExitCode, ev.Message, ev.Host = "complete", &d, &code, msg, "bench-host"
					}
					if bc.series {
						ev.Series = fmt.Sprintf("run-%d", run)
					}
					if bc.eventIDs {
						ev.EventId = fmt.Sprintf("%08x-0000-4000-8000-%012x", j, j)
					}
					evs[i] = ev
					j++
				}
				return withRID(ingestAt(t0+int64(j), bc.retention, evs...), fmt.Sprint("rid-", j), t0+int64(j))
			}
			index := s.AppliedIndex() + 1
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				cmds := make([]*raftv1.Command, bc.perCall)
				for i := range cmds {
					cmds[i] = next()
				}
				es := entries(index, cmds...)
				index += uint64(len(es))
				b.StartTimer()
				for _, r := range s.ApplyBatch(es) {
					if r.GetStatus() != raftv1.Status_STATUS_OK || r.GetEvents()[0].GetOutcome() != stored {
						b.Fatalf("ingest: %v", r.GetStatus())
					}
				}
			}
			b.ReportMetric(float64(b.N*bc.perCall*perBatch)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
