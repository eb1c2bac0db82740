package state

import (
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

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
