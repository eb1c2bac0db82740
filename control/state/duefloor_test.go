package state

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestDueScanStartsPastTheDelivered: once the first deliveries are
// recorded, a scan starts at the first open one (the deleted keys before
// it are not walked again), and a due key set below that floor later (an
// alert stamped earlier, a retry) is still found.
func TestDueScanStartsPastTheDelivered(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), uncapped("a"), createChannelCmd("a", "c1", true))
	var ids []string
	for i := range 5 {
		ids = append(ids, raise(t, s, "a", fmt.Sprint("job-", i), t0+int64(i)).GetId())
	}
	for i := range 3 {
		mustOK(t, s, recordDeliveryCmd(t0+10, &raftv1.RecordDelivery{AlertId: ids[i], ChannelRef: "chan:c1", Delivered: true}))
	}
	if got, _ := due(t, s, t0+10); !slices.Equal(got, []string{ids[3] + "/chan:c1", ids[4] + "/chan:c1"}) {
		t.Fatalf("due %v, want the last two", got)
	}
	if from, _ := s.due.start(); !bytes.Equal(from, alertDueKey(t0+3, ids[3], "chan:c1")) {
		t.Fatalf("the next scan starts at %q, want the first open delivery's key", from)
	}

	// An alert stamped before the floor (raised by an entry a former
	// leader stamped, say) is found.
	early := raise(t, s, "a", "early", t0-100).GetId()
	if got, _ := due(t, s, t0+10); !slices.Equal(got, []string{early + "/chan:c1", ids[3] + "/chan:c1", ids[4] + "/chan:c1"}) {
		t.Fatalf("due %v, want the early alert first", got)
	}

	// With every delivery recorded nothing is live: the floor is past the
	// index, and a retry's key, set later, is found.
	for _, id := range []string{early, ids[3]} {
		mustOK(t, s, recordDeliveryCmd(t0+20, &raftv1.RecordDelivery{AlertId: id, ChannelRef: "chan:c1", Delivered: true}))
	}
	mustOK(t, s, recordDeliveryCmd(t0+20, &raftv1.RecordDelivery{AlertId: ids[4], ChannelRef: "chan:c1", Error: "503", NextTryUnixMs: t0 + 30}))
	if got, next := due(t, s, t0+25); len(got) != 0 || next != t0+30 {
		t.Fatalf("due %v, next %d: want none, next %d", got, next, t0+30)
	}
	mustOK(t, s, recordDeliveryCmd(t0+30, &raftv1.RecordDelivery{AlertId: ids[4], ChannelRef: "chan:c1", Delivered: true}))
	if got, next := due(t, s, t0+40); len(got) != 0 || next != 0 {
		t.Fatalf("due %v, next %d: want none", got, next)
	}
	if from, _ := s.due.start(); !bytes.Equal(from, dueEnd) {
		t.Fatalf("with nothing open the next scan starts at %q, want past the index", from)
	}
	late := raise(t, s, "a", "late", t0+50).GetId()
	if got, _ := due(t, s, t0+50); !slices.Equal(got, []string{late + "/chan:c1"}) {
		t.Fatalf("due %v, want the new alert", got)
	}
}

// TestDueFloorKeepsKeysAScanDidNotSee: a scan whose snapshot was taken
// before a transaction set a due key below what it saw does not move the
// floor past that key, whichever of the two tells the floor first.
func TestDueFloorKeepsKeysAScanDidNotSee(t *testing.T) {
	low, high := alertDueKey(t0, "a1", "chan:c"), alertDueKey(t0+1000, "a2", "chan:c")

	// The transaction commits and lowers the floor after the scan began
	// and before it ends: the scan may not raise it.
	var f dueFloor
	_, gen := f.start()
	f.setting(low)
	f.committed()
	f.advance(gen, high)
	if from, _ := f.start(); !bytes.Equal(from, prefixAlertDue) {
		t.Fatalf("after a set during the scan the floor is %q, want the index's start", from)
	}

	// The scan ends first and raises it; the commit lowers it again.
	f = dueFloor{}
	_, gen = f.start()
	f.advance(gen, high)
	f.setting(high)
	f.setting(low)
	f.committed()
	if from, _ := f.start(); !bytes.Equal(from, low) {
		t.Fatalf("the floor is %q after the commit, want the lowest key it set", from)
	}
}

// BenchmarkDueDeliveriesAfterABurst: the scan a dispatcher makes after
// 10,000 alerts of which all but the last 10 were delivered.
func BenchmarkDueDeliveriesAfterABurst(b *testing.B) {
	s, err := Open(Options{Dir: b.TempDir(), Small: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	must := func(c *raftv1.Command) {
		if res := s.ApplyBatch([]Entry{{Index: s.AppliedIndex() + 1, Command: c}})[0]; res.GetStatus() != raftv1.Status_STATUS_OK {
			b.Fatalf("%v: %s", res.GetStatus(), res.GetMessage())
		}
	}
	for _, c := range []*raftv1.Command{newAccount("a"), uncapped("a"), createChannelCmd("a", "c1", true)} {
		must(c)
	}
	const n = 10_000
	for i := 0; i < n; i += 250 {
		var evs []*raftv1.Event
		for j := i; j < i+250; j++ {
			evs = append(evs, ping("a", fmt.Sprint("job-", j), "fail", t0+int64(j)))
		}
		must(ingestAt(t0+int64(i), 0, evs...))
	}
	var ids []string
	if _, err := s.DueDeliveries(t0+n, func(d DueDelivery) bool { ids = append(ids, d.AlertID); return true }); err != nil {
		b.Fatal(err)
	}
	for _, id := range ids[:len(ids)-10] {
		must(recordDeliveryCmd(t0+n, &raftv1.RecordDelivery{AlertId: id, ChannelRef: "chan:c1", Delivered: true}))
	}
	b.ResetTimer()
	for range b.N {
		left := 0
		if _, err := s.DueDeliveries(t0+n, func(DueDelivery) bool { left++; return true }); err != nil || left != 10 {
			b.Fatalf("%d due, %v", left, err)
		}
	}
}
