package state

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// TestEventsWithTimeKeysArePrunedWithThem: events stored before ev-due:
// (the older layout) each have an ev-time: key. A monitor with such events keeps
// working: retention by count deletes their keys with them, the monitor's
// next events get none, and age pruning takes the old ones by their keys
// and by the monitor's ev-due: key alike, leaving no key behind.
func TestEventsWithTimeKeysArePrunedWithThem(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	var evs []*raftv1.Event
	for i := range 5 {
		evs = append(evs, ping("a", "job", "complete", t0+int64(i)))
	}
	ingestOK(t, s, ingestAt(t0, 0, evs...))
	id := toTimeKeys(t, s, "a", "job")
	timeKeys := func(step string, want ...uint64) {
		t.Helper()
		var keys []string
		for _, seq := range want {
			keys = append(keys, string(eventTimeKey(t0+int64(seq), id, seq)))
		}
		if got := keysWithPrefix(t, s, prefixEventTime); !slices.Equal(got, keys) {
			t.Fatalf("%s: ev-time: keys %q, want those of %v", step, got, want)
		}
	}

	// Keeping 3 of 6 deletes events 0-2 with their keys; event 5 gets none.
	ingestOK(t, s, ingestAt(t0+10, 3, ping("a", "job", "complete", t0+10)))
	timeKeys("after retention by count", 3, 4)
	p := mustMonitor(t, s, "a", "job").GetPing()
	if p.GetUntimedFrom() != 6 || p.GetEventsDueUnixMs() != t0+10 || p.GetEvents() != 3 {
		t.Fatalf("ping state %v, want untimed from 6, due at t0+10, 3 events", p)
	}
	if due := keysWithPrefix(t, s, prefixEventDue); !slices.Equal(due, []string{string(eventDueKey(t0+10, id))}) {
		t.Fatalf("ev-due: keys %q", due)
	}
	// By age: event 3 by its time key (the monitor is not due yet), then
	// 4 and 5 by the monitor's ev-due: key.
	if n := pruned(t, s, t0+4, 10); n != 1 {
		t.Fatalf("deleted %d, want 1", n)
	}
	timeKeys("after pruning event 3", 4)
	if n := pruned(t, s, t0+20, 10); n != 2 {
		t.Fatalf("deleted %d, want 2", n)
	}
	timeKeys("after pruning all")
	for _, prefix := range [][]byte{prefixEvent, prefixEventDue} {
		if left := keysWithPrefix(t, s, prefix); len(left) != 0 {
			t.Fatalf("%s keys left: %q", prefix, left)
		}
	}
	if n := mustMonitor(t, s, "a", "job").GetPing().GetEvents(); n != 0 {
		t.Fatalf("%d events counted", n)
	}
}

// TestMissedRunsArePrunedByAge: the missed run the deadline engine records
// is filed for age pruning like a ping, also as the only event of its
// monitor.
func TestMissedRunsArePrunedByAge(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0)))
	m := mustMonitor(t, s, "a", "job")
	interval, grace := int64(60), int64(30)
	mustOK(t, s, putMonitorsCmd("a", nil, []*raftv1.MonitorSpec{{
		Uuid: m.GetUuid(), Kind: "ping", Name: "job", Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: &interval, GraceSeconds: &grace,
	}}))
	if n := pruned(t, s, t0+1, 10); n != 1 {
		t.Fatalf("deleted %d, want the ping", n)
	}
	m = mustMonitor(t, s, "a", "job")
	_, _, due := pingstate.Deadlines(PingSettings(m), PingState(m))
	mustOK(t, s, fireCmd("a", m.GetUuid(), pingstate.DeadlineMissed, due, due+500))
	if evs := mustEvents(t, s, "a", m.GetUuid(), 0); len(evs) != 1 || evs[0].GetEvent().GetEventType() != EventMissed {
		t.Fatalf("history %v, want the missed run", evs)
	}
	if n := pruned(t, s, due+501, 10); n != 1 {
		t.Fatalf("deleted %d, want the missed run", n)
	}
	if left := keysWithPrefix(t, s, prefixEvent); len(left) != 0 {
		t.Fatalf("events left: %q", left)
	}
}

// TestDueKeyOfAMissingMonitorIsDropped: an ev-due: key whose monitor is
// gone (DeleteMonitor deletes it; this is the safety net) is deleted by the
// next prune, which goes on to the monitors after it.
func TestDueKeyOfAMissingMonitorIsDropped(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job", "complete", t0+5)))
	orphan := eventDueKey(t0, "00000000-0000-4000-8000-000000000000")
	if err := s.db().Update(func(txn *badger.Txn) error { return txn.Set(orphan, nil) }); err != nil {
		t.Fatal(err)
	}
	if n := pruned(t, s, t0+10, 10); n != 1 {
		t.Fatalf("deleted %d, want the one event", n)
	}
	if left := keysWithPrefix(t, s, prefixEventDue); len(left) != 0 {
		t.Fatalf("ev-due: keys left: %q", left)
	}
}

// toTimeKeys rewrites the ping monitor name of account acct and its
// events in the older layout: a time key per event,
// no ev-due: key, a record without events_due_unix_ms and untimed_from. It
// returns the monitor's uuid.
func toTimeKeys(t *testing.T, s *Store, acct, name string) string {
	t.Helper()
	m := mustMonitor(t, s, acct, name)
	id := m.GetUuid()
	evs := mustEvents(t, s, acct, id, 0)
	old := proto.CloneOf(m)
	old.Ping.EventsDueUnixMs, old.Ping.UntimedFrom = 0, 0
	rec, err := proto.MarshalOptions{Deterministic: true}.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	err = s.db().Update(func(txn *badger.Txn) error {
		for _, e := range evs {
			if err := txn.Set(eventTimeKey(e.GetEvent().GetReceivedUnixMs(), id, e.GetSeq()), nil); err != nil {
				return err
			}
		}
		if err := txn.Delete(eventDueKey(m.GetPing().GetEventsDueUnixMs(), id)); err != nil {
			return err
		}
		return txn.Set(monitorKey(id), rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.values.reset()
	return id
}

// A PruneEvents says what it deleted, by kind: expired request ids and
// event ids, and events past the age.
func TestPruneCountsByKind(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, withRID(newAccount("a"), "rid-1", t0))
	var events []*raftv1.Event
	for i := range 3 {
		events = append(events, &raftv1.Event{AccountId: "a", Monitor: "job", EventType: "ping", Status: "run", ReceivedUnixMs: t0, EventId: fmt.Sprint("id-", i)})
	}
	mustOK(t, s, cmd(&raftv1.Command{TimeUnixMs: t0, Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: events}}}))

	// Eight days on: the request id and the event ids have expired; the
	// events are kept unless they are before the age.
	later := t0 + 8*24*60*60*1000
	res := apply(t, s, pruneAt(later, t0, 1000))[0]
	if got := res.GetPruned(); res.GetDeleted() != 4 || got.GetRequestIds() != 1 || got.GetEventIds() != 3 || got.GetEvents() != 0 || got.GetSessions() != 0 {
		t.Fatalf("pruned %v (deleted %d), want 1 request id and 3 event ids", got, res.GetDeleted())
	}
	res = apply(t, s, pruneAt(later, t0+1, 1000))[0]
	if got := res.GetPruned(); res.GetDeleted() != 3 || got.GetEvents() != 3 || got.GetEventIds() != 0 {
		t.Fatalf("pruned %v (deleted %d), want the 3 events", got, res.GetDeleted())
	}
}
