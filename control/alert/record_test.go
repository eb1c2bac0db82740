package alert

import (
	"context"
	"sync/atomic"
	"testing"

	"lookout/control/alert/channel/webhook"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// heldRecords holds every RecordDelivery proposal until release is
// closed, counting those held.
type heldRecords struct {
	Applier
	release chan struct{}
	held    atomic.Int32
}

func (h *heldRecords) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if cmd.GetRecordDelivery() != nil {
		h.held.Add(1)
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
