package state

import (
	"fmt"
	"slices"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

func recordBatchCmd(now int64, records ...*raftv1.RecordDelivery) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_RecordDeliveries{RecordDeliveries: &raftv1.RecordDeliveries{Records: records}}})
}

// TestRecordDeliveriesAppliesEachAsAlone: a RecordDeliveries leaves the
// alerts and the channel's history as the same records applied one command
// each, with one result per record.
func TestRecordDeliveriesAppliesEachAsAlone(t *testing.T) {
	setup := func() (*Store, []*raftv1.RecordDelivery) {
		s := openStore(t)
		mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true), createChannelCmd("a", "c2", true))
		for i := range 3 {
			ingestOK(t, s, ingestAt(t0, 0, ping("a", fmt.Sprint("job-", i), "fail", t0+int64(i))))
		}
		pending, err := s.PendingAlerts(0)
		if err != nil || len(pending) != 3 {
			t.Fatalf("pending %d, %v", len(pending), err)
		}
		ids := make([]string, len(pending))
		for i, a := range pending {
			ids[i] = a.GetId()
		}
		slices.Sort(ids)
		return s, []*raftv1.RecordDelivery{
			{AlertId: ids[0], ChannelRef: "chan:c1", Delivered: true},
			{AlertId: ids[0], ChannelRef: "chan:c2", Error: "503", NextTryUnixMs: t0 + 60_000},
			{AlertId: ids[1], ChannelRef: "chan:c1", Error: "gone", GiveUp: true, Permanent: true},
			{AlertId: "no-such-alert", ChannelRef: "chan:c1", Delivered: true},
			{AlertId: ids[0], ChannelRef: "chan:c2", Delivered: true}, // after its retry above
			{AlertId: ids[2], ChannelRef: "chan:c1", Delivered: true},
		}
	}
	alone, records := setup()
	var want []*raftv1.Result
	for _, r := range records {
		want = append(want, apply(t, alone, recordDeliveryCmd(t0+1000, r))[0])
	}
	batched, records := setup()
	res := apply(t, batched, recordBatchCmd(t0+1000, records...))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK || len(res.GetItems()) != len(records) {
		t.Fatalf("batch: %v %s, %d items", res.GetStatus(), res.GetMessage(), len(res.GetItems()))
	}
	for i, got := range res.GetItems() {
		if got.GetStatus() != want[i].GetStatus() {
			t.Errorf("item %d: %v, alone %v", i, got.GetStatus(), want[i].GetStatus())
		}
	}
	if want[3].GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("a record of no alert: %v", want[3])
	}
	for _, r := range records[:3] {
		a, err := alone.Alert(r.GetAlertId())
		if err != nil {
			t.Fatal(err)
		}
		b, err := batched.Alert(r.GetAlertId())
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(deliveryStates(a)) != fmt.Sprint(deliveryStates(b)) {
			t.Errorf("alert %s: batched %v, alone %v", r.GetAlertId(), deliveryStates(b), deliveryStates(a))
		}
	}
	for _, ch := range []string{"c1", "c2"} {
		ha, _ := alone.ChannelHistory("a", ch)
		hb, _ := batched.ChannelHistory("a", ch)
		if len(ha) != len(hb) || len(ha) == 0 {
			t.Errorf("history of %s: %d records batched, %d alone", ch, len(hb), len(ha))
		}
	}
	pa, _ := alone.PendingAlerts(0)
	pb, _ := batched.PendingAlerts(0)
	if len(pa) != 2 || len(pb) != len(pa) {
		t.Errorf("alerts pending: %d batched, %d alone (want 2: their chan:c2 deliveries are open)", len(pb), len(pa))
	}
}

func deliveryStates(a *statev1.Alert) []string {
	var out []string
	for _, d := range a.GetDeliveries() {
		out = append(out, fmt.Sprintf("%s:%d:%v:%v", d.GetChannelRef(), d.GetAttempts(), d.GetDelivered(), d.GetGivenUp()))
	}
	return out
}

func recordBatchWorstCase() worstCase {
	var records []*raftv1.RecordDelivery
	return worstCase{
		// MaxRecordDeliveries alerts, each with a delivery per channel of
		// the account and the longest message, recorded with the longest
		// error the dispatcher records to a channel whose history is full.
		setup: func(t *testing.T, s *Store) {
			for i := range MaxAccountChannels {
				mustOK(t, s, createChannelCmd("a", fmt.Sprint("c", i), true))
			}
			mustOK(t, s, uncapped("a"))
			for i := range MaxRecordDeliveries {
				ingestOK(t, s, ingestAt(t0, 0, ping("a", fmt.Sprint("job-", i), "fail", t0, func(e *raftv1.Event) { e.Message = long(64 << 10) })))
			}
			pending, err := s.PendingAlerts(0)
			if err != nil || len(pending) != MaxRecordDeliveries {
				t.Fatalf("pending %d, %v", len(pending), err)
			}
			var ids []string
			records = nil
			for _, a := range pending {
				ids = append(ids, a.GetId())
				records = append(records, &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: "chan:c7", Error: long(503), NextTryUnixMs: t0 + 1000})
			}
			for i := range MaxChannelHistory {
				ingestOK(t, s, ingestAt(t0, 0, ping("a", fmt.Sprint("other-", i), "fail", t0)))
			}
			fullChannelHistory(t, s, "c7", ids...)
		},
		worst: func(*testing.T, *Store) *raftv1.Command { return recordBatchCmd(t0+1, records...) },
		want:  raftv1.Status_STATUS_OK,
		over:  recordBatchCmd(t0+1, &raftv1.RecordDelivery{AlertId: long(MaxKeyPartBytes + 1)}),
	}
}
