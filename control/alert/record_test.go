package alert

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"lookout/control/alert/channel/webhook"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// heldRecords holds every RecordDeliveries proposal until release is
// closed, counting the records held.
type heldRecords struct {
	Applier
	release chan struct{}
	held    atomic.Int32
}

func (h *heldRecords) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if recs := cmd.GetRecordDeliveries().GetRecords(); len(recs) > 0 {
		h.held.Add(int32(len(recs)))
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Applier.Apply(ctx, cmd)
}

// TestSlotIsFreeWhileTheOutcomeIsRecorded: with one slot and raft slow to
// record, the second alert is sent while the first one's outcome is still
// being recorded; both records are written once raft takes them.
func TestSlotIsFreeWhileTheOutcomeIsRecorded(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	first, second := e.fail("first"), e.fail("second")
	records := &heldRecords{Applier: e.cluster, release: make(chan struct{})}
	e.start(DispatcherOptions{Concurrency: 1, Cluster: records})
	e.waitFor("both alerts sent while the first record is held", func() bool { return r.count() == 2 })
	// The second record is proposed after its request was answered: wait
	// for it (on a loaded machine the receiver may count first).
	e.waitFor("both records held", func() bool { return records.held.Load() == 2 })
	close(records.release)
	e.waitFor("both deliveries recorded", func() bool {
		return e.delivery(first.GetId(), "chan:ch-1").GetDelivered() && e.delivery(second.GetId(), "chan:ch-1").GetDelivered()
	})
	if r.count() != 2 {
		t.Errorf("the receiver got %d requests, want 2", r.count())
	}
}

// countingRecords counts the RecordDeliveries commands and their records.
type countingRecords struct {
	Applier
	commands, records atomic.Int32
}

func (c *countingRecords) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if recs := cmd.GetRecordDeliveries().GetRecords(); len(recs) > 0 {
		c.commands.Add(1)
		c.records.Add(int32(len(recs)))
	}
	return c.Applier.Apply(ctx, cmd)
}

// TestOutcomesShareRecordCommands: the outcomes of many deliveries under
// way together are recorded in fewer commands than outcomes, each within
// its bound, and every delivery ends recorded.
func TestOutcomesShareRecordCommands(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	e.defaultChannel("ch-1", webhook.Type, r.config())
	const n = 60
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.fail(fmt.Sprint("job-", i)).GetId()
	}
	records := &countingRecords{Applier: &slowApplier{Applier: e.cluster, delay: 20 * time.Millisecond}}
	e.start(DispatcherOptions{Concurrency: 16, ChannelConcurrency: 16, AccountConcurrency: 16, Cluster: records})
	e.waitFor("every delivery recorded", func() bool {
		for _, id := range ids {
			if !e.delivery(id, "chan:ch-1").GetDelivered() {
				return false
			}
		}
		return true
	})
	if got := records.records.Load(); got != n {
		t.Fatalf("%d records proposed for %d deliveries", got, n)
	}
	if cmds := records.commands.Load(); cmds >= n || cmds < n/state.MaxRecordDeliveries {
		t.Fatalf("%d commands for %d records", cmds, n)
	}
}

// slowApplier takes delay to apply each RecordDeliveries, as raft under
// load would, so that outcomes queue behind it.
type slowApplier struct {
	Applier
	delay time.Duration
}

func (s *slowApplier) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if cmd.GetRecordDeliveries() != nil {
		time.Sleep(s.delay)
	}
	return s.Applier.Apply(ctx, cmd)
}
