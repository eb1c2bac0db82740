package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
	"lookout/internal/pingstate"
)

// BenchmarkMissedBurst applies, on one store with the production Badger
// options, what every node applies for a burst of missed deadlines (the
// deadline burst of make bench-scale): 10,000 ping monitors expected every
// minute in 100 accounts, each with a default webhook channel, pinged once;
// then their missed deadlines as FireDeadlines entries of MaxFireDeadlines
// (each raises an alert with one delivery), then every delivery recorded
// as delivered in RecordDeliveries entries of MaxRecordDeliveries. Raft
// hands the state machine what has committed, entriesPerCall at a time.
// The setup of each iteration is not timed; fire-µs and record-µs are the
// costs per deadline and per record.
func BenchmarkMissedBurst(b *testing.B) {
	const (
		accounts       = 100
		monitors       = 10000
		entriesPerCall = 4
	)
	var fireTime, recordTime time.Duration
	for range b.N {
		b.StopTimer()
		s, err := Open(Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		setup := pingMonitorsSetup(accounts, monitors, "due-%05d", 60)
		for _, r := range s.ApplyBatch(entries(s.AppliedIndex()+1, setup...)) {
			if r.GetStatus() != raftv1.Status_STATUS_OK {
				b.Fatalf("setup: %v %s", r.GetStatus(), r.GetMessage())
			}
		}
		var evs []*raftv1.Event
		for i := range monitors {
			evs = append(evs, ping(fmt.Sprint("acct", i%accounts), fmt.Sprintf("due-%05d", i), "complete", t0))
			if len(evs) == IngestBatchMaxEvents || i == monitors-1 {
				for _, r := range s.ApplyBatch(entries(s.AppliedIndex()+1, ingestAt(t0, 0, evs...))) {
					if r.GetStatus() != raftv1.Status_STATUS_OK {
						b.Fatalf("ping: %v %s", r.GetStatus(), r.GetMessage())
					}
				}
				evs = nil
			}
		}
		var deadlines []*raftv1.FireDeadline
		var due int64
		if err := s.PingMonitors(func(m *statev1.Monitor) error {
			_, _, due = pingstate.Deadlines(PingSettings(m), PingState(m))
			deadlines = append(deadlines, &raftv1.FireDeadline{AccountId: m.GetAccountId(), MonitorUuid: m.GetUuid(), Kind: pingstate.DeadlineMissed, DueUnixMs: due})
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		fires := chunked(deadlines, MaxFireDeadlines, func(ds []*raftv1.FireDeadline) *raftv1.Command { return fireDeadlinesCmd(ds, due+10) })

		b.StartTimer()
		start := time.Now()
		applyAll(b, s, fires, entriesPerCall)
		fireTime += time.Since(start)
		b.StopTimer()

		var recs []*raftv1.RecordDelivery
		if err := s.view(func(txn *badger.Txn) error {
			return scanProto(txn, prefixAlert, func() *statev1.Alert { return new(statev1.Alert) }, func(a *statev1.Alert) error {
				recs = append(recs, &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: "chan:hook", Delivered: true})
				return nil
			})
		}); err != nil {
			b.Fatal(err)
		}
		if len(recs) != monitors {
			b.Fatalf("%d alerts raised, want %d", len(recs), monitors)
		}
		records := chunked(recs, MaxRecordDeliveries, func(rs []*raftv1.RecordDelivery) *raftv1.Command { return recordDeliveriesCmd(rs, due+1000) })

		b.StartTimer()
		start = time.Now()
		applyAll(b, s, records, entriesPerCall)
		recordTime += time.Since(start)
		b.StopTimer()
		s.Close()
	}
	n := float64(b.N * monitors)
	b.ReportMetric(float64(fireTime.Microseconds())/n, "fire-µs")
	b.ReportMetric(float64(recordTime.Microseconds())/n, "record-µs")
	b.ReportMetric(0, "ns/op")
}

// pingMonitorsSetup is the commands that make accounts accounts ("acct0"
// on; each uncapped, with a default webhook channel) and monitors ping
// monitors spread over them in turn, named by the format name from their
// number and expected every interval seconds.
func pingMonitorsSetup(accounts, monitors int, name string, interval int64) []*raftv1.Command {
	var setup []*raftv1.Command
	for a := range accounts {
		id := fmt.Sprint("acct", a)
		setup = append(setup, newAccount(id), uncapped(id), createChannelCmd(id, "hook", true))
	}
	for a := range accounts {
		var specs []*raftv1.MonitorSpec
		for i := a; i < monitors; i += accounts {
			specs = append(specs, &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: KindPing,
				Name: fmt.Sprintf(name, i), Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: proto.Int64(interval)})
		}
		setup = append(setup, putMonitorsCmd(fmt.Sprint("acct", a), specs, nil))
	}
	return setup
}

// chunked makes a command of each run of at most n items, in order.
func chunked[T any](items []T, n int, cmd func([]T) *raftv1.Command) []*raftv1.Command {
	var out []*raftv1.Command
	for i := 0; i < len(items); i += n {
		out = append(out, cmd(items[i:min(i+n, len(items))]))
	}
	return out
}

func fireDeadlinesCmd(ds []*raftv1.FireDeadline, now int64) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_FireDeadlines{FireDeadlines: &raftv1.FireDeadlines{Deadlines: ds}}})
}

func recordDeliveriesCmd(recs []*raftv1.RecordDelivery, now int64) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_RecordDeliveries{RecordDeliveries: &raftv1.RecordDeliveries{Records: recs}}})
}

// applyAll applies cmds, perCall entries to a call, and fails on any
// result but OK or one that is stale.
func applyAll(b *testing.B, s *Store, cmds []*raftv1.Command, perCall int) {
	for i := 0; i < len(cmds); i += perCall {
		for _, r := range s.ApplyBatch(entries(s.AppliedIndex()+1, cmds[i:min(i+perCall, len(cmds))]...)) {
			if r.GetStatus() != raftv1.Status_STATUS_OK {
				b.Fatalf("apply: %v %s", r.GetStatus(), r.GetMessage())
			}
			for _, item := range r.GetItems() {
				if item.GetStatus() != raftv1.Status_STATUS_OK || item.GetStale() {
					b.Fatalf("apply: %v %s (stale %v)", item.GetStatus(), item.GetMessage(), item.GetStale())
				}
			}
		}
	}
}
