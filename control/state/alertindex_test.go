package state

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

func recordDeliveryCmd(now int64, rec *raftv1.RecordDelivery) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_RecordDelivery{RecordDelivery: rec}})
}

// uncapped lets pings of acct create as many monitors a minute as a plan
// may allow.
func uncapped(acct string) *raftv1.Command {
	p := plan("free")
	n := int64(MaxMonitorsCreatedPerMinute)
	p.MonitorsCreatedPerMinute = &n
	return setPlan(acct, p)
}

func pruneAlertsCmd(now, before, max int64) *raftv1.Command {
	return cmd(&raftv1.Command{TimeUnixMs: now, Op: &raftv1.Command_PruneAlerts{PruneAlerts: &raftv1.PruneAlerts{BeforeUnixMs: before, Max: max}}})
}

// raise fails monitor mon of acct at now and returns the alert raised.
func raise(t *testing.T, s *Store, acct, mon string, now int64) *statev1.Alert {
	t.Helper()
	ingestOK(t, s, ingestAt(now, 0, ping(acct, mon, "fail", now)))
	m := mustMonitor(t, s, acct, mon)
	var found *statev1.Alert
	if err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixAlert, func() *statev1.Alert { return new(statev1.Alert) }, func(a *statev1.Alert) error {
			if a.GetMonitorUuid() == m.GetUuid() {
				found = a
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if found == nil {
		t.Fatalf("no alert raised for %s", mon)
	}
	return found
}

// due lists the deliveries due at now as alert id/channel ref, and the
// next try after now.
func due(t *testing.T, s *Store, now int64) ([]string, int64) {
	t.Helper()
	var out []string
	next, err := s.DueDeliveries(now, func(d DueDelivery) bool {
		out = append(out, d.AlertID+"/"+d.ChannelRef)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, next
}

func TestDueIndexFollowsDeliveries(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true), createChannelCmd("a", "c2", true))
	a := raise(t, s, "a", "job", t0)
	id := a.GetId()
	if got, next := due(t, s, t0-1); len(got) != 0 || next != t0 {
		t.Fatalf("before the raise: due %v, next %d (want %d)", got, next, t0)
	}
	if got, next := due(t, s, t0); !slices.Equal(got, []string{id + "/chan:c1", id + "/chan:c2"}) || next != 0 {
		t.Fatalf("at the raise: due %v, next %d", got, next)
	}

	// A failure moves the delivery to its next try.
	mustOK(t, s, recordDeliveryCmd(t0+5, &raftv1.RecordDelivery{AlertId: id, ChannelRef: "chan:c1", Error: "503", NextTryUnixMs: t0 + 10_000}))
	if got, next := due(t, s, t0+5); !slices.Equal(got, []string{id + "/chan:c2"}) || next != t0+10_000 {
		t.Fatalf("after a failure: due %v, next %d", got, next)
	}
	// Delivered and given up leave the index; the last one finishes the alert.
	mustOK(t, s, recordDeliveryCmd(t0+6, &raftv1.RecordDelivery{AlertId: id, ChannelRef: "chan:c2", Delivered: true}))
	if got, _ := due(t, s, t0+20_000); !slices.Equal(got, []string{id + "/chan:c1"}) {
		t.Fatalf("after a delivery: due %v", got)
	}
	if done := keysWithPrefix(t, s, prefixAlertDone); len(done) != 0 {
		t.Fatalf("finished with a delivery left: %q", done)
	}
	mustOK(t, s, recordDeliveryCmd(t0+20_000, &raftv1.RecordDelivery{AlertId: id, ChannelRef: "chan:c1", Error: "400", GiveUp: true}))
	if got, next := due(t, s, t0+1_000_000); len(got) != 0 || next != 0 {
		t.Fatalf("after giving up: due %v, next %d", got, next)
	}
	if done := keysWithPrefix(t, s, prefixAlertDone); !slices.Equal(done, []string{string(alertDoneKey(t0+20_000, id))}) {
		t.Fatalf("done index %q", done)
	}
	if p, _ := s.PendingAlerts(0); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
}

func TestDueDeliveriesReadsOnlyTheDueRange(t *testing.T) {
	t.Parallel() // heavy: overlaps the package's other heavy tests
	s := openStore(t)
	mustOK(t, s, newAccount("a"), uncapped("a"), createChannelCmd("a", "c1", true))
	const later = 2_000
	for b := 0; b < later/250; b++ {
		var evs []*raftv1.Event
		for i := 0; i < 250; i++ {
			evs = append(evs, ping("a", fmt.Sprint("later-", b, "-", i), "fail", t0+3_600_000))
		}
		ingestOK(t, s, ingestAt(t0+3_600_000, 0, evs...)) // next try in an hour
	}
	now := raise(t, s, "a", "now", t0)
	before := s.OutboxReads()
	got, next := due(t, s, t0)
	if !slices.Equal(got, []string{now.GetId() + "/chan:c1"}) || next != t0+3_600_000 {
		t.Fatalf("due %v, next %d", got, next)
	}
	if reads := s.OutboxReads() - before; reads != 2 {
		t.Errorf("read %d outbox keys for 1 due delivery among %d, want 2 (it and the next)", reads, later+1)
	}
	if all, _ := due(t, s, t0+3_600_000); len(all) != later+1 {
		t.Fatalf("%d deliveries due in an hour, want %d", len(all), later+1)
	}
	// A scan stopped by its caller reads no further.
	before = s.OutboxReads()
	n := 0
	if next, err := s.DueDeliveries(t0+3_600_000, func(DueDelivery) bool { n++; return n < 10 }); err != nil || next != 0 || n != 10 {
		t.Fatalf("stopped scan: %d calls, next %d, %v", n, next, err)
	}
	if reads := s.OutboxReads() - before; reads != 10 {
		t.Errorf("a scan stopped after 10 read %d keys", reads)
	}
}

func TestPruneAlertsSweepsOnlyOldFinishedAlerts(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true), newAccount("b"))
	const day = 24 * 3_600_000
	delivered := raise(t, s, "a", "delivered", t0)
	givenUp := raise(t, s, "a", "given-up", t0)
	pending := raise(t, s, "a", "pending", t0)
	young := raise(t, s, "a", "young", t0)
	nowhere := raise(t, s, "b", "no-channels", t0) // finished as raised
	mustOK(t, s,
		recordDeliveryCmd(t0+1, &raftv1.RecordDelivery{AlertId: delivered.GetId(), ChannelRef: "chan:c1", Delivered: true}),
		recordDeliveryCmd(t0+2, &raftv1.RecordDelivery{AlertId: givenUp.GetId(), ChannelRef: "chan:c1", GiveUp: true, Error: "410"}),
		recordDeliveryCmd(t0+3, &raftv1.RecordDelivery{AlertId: pending.GetId(), ChannelRef: "chan:c1", Error: "503", NextTryUnixMs: t0 + day}),
		recordDeliveryCmd(t0+2*day, &raftv1.RecordDelivery{AlertId: young.GetId(), ChannelRef: "chan:c1", Delivered: true}),
	)
	for _, m := range []int64{0, MaxPruneAlerts + 1} {
		if r := apply(t, s, pruneAlertsCmd(t0+3*day, t0+day, m))[0]; r.GetStatus() != raftv1.Status_STATUS_INVALID {
			t.Fatalf("max %d: %v", m, r)
		}
	}
	// Bounded entries: 2, then the third, then nothing.
	for _, want := range []int64{2, 1, 0} {
		if r := apply(t, s, pruneAlertsCmd(t0+3*day, t0+day, 2))[0]; r.GetStatus() != raftv1.Status_STATUS_OK || r.GetDeleted() != want {
			t.Fatalf("prune: %v %s, %d deleted, want %d", r.GetStatus(), r.GetMessage(), r.GetDeleted(), want)
		}
	}
	for _, a := range []*statev1.Alert{delivered, givenUp, nowhere} {
		if _, err := s.Alert(a.GetId()); !errors.Is(err, ErrNotFound) {
			t.Errorf("old finished alert %s kept: %v", a.GetId(), err)
		}
	}
	for _, a := range []*statev1.Alert{pending, young} {
		if _, err := s.Alert(a.GetId()); err != nil {
			t.Errorf("alert %s: %v", a.GetId(), err)
		}
	}
	if got, _ := due(t, s, t0+day); !slices.Equal(got, []string{pending.GetId() + "/chan:c1"}) {
		t.Errorf("due after the sweep: %v", got)
	}
	if p, _ := s.PendingAlerts(0); len(p) != 1 || p[0].GetId() != pending.GetId() {
		t.Errorf("pending after the sweep: %v", p)
	}
	if done := keysWithPrefix(t, s, prefixAlertDone); !slices.Equal(done, []string{string(alertDoneKey(t0+2*day, young.GetId()))}) {
		t.Errorf("done index after the sweep: %q", done)
	}
}

// TestDueKeyCarriesTheAccount: the due index gives each delivery's account
// (the dispatcher reads no alert to share the slots by account), but for an
// account id too long for the key's value, whose alert says it.
func TestDueKeyCarriesTheAccount(t *testing.T) {
	s := openStore(t)
	long := "acct-" + strings.Repeat("x", maxDueAccountBytes)
	for _, id := range []string{"a", long} {
		mustOK(t, s, newAccount(id), uncapped(id), createChannelCmd(id, "c1", true))
		// The key of a retry carries it too.
		a := raise(t, s, id, "job", t0)
		mustOK(t, s, recordDeliveryCmd(t0, &raftv1.RecordDelivery{AlertId: a.GetId(), ChannelRef: "chan:c1", Error: "503", NextTryUnixMs: t0 + 10}))
	}
	var got []string
	if _, err := s.DueDeliveries(t0+10, func(d DueDelivery) bool {
		a, err := s.Alert(d.AlertID)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.GetAccountId()+"="+d.AccountID)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"a=a", long + "="}; !slices.Equal(got, want) {
		t.Fatalf("due deliveries by account (the alert's = the key's): %q, want %q", got, want)
	}
}
