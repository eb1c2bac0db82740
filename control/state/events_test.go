package state

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestEventColors(t *testing.T) {
	stream := func(state string) *raftv1.Event { return &raftv1.Event{EventType: "stream_event", State: state} }
	for _, tc := range []struct {
		ev   *raftv1.Event
		want string
	}{
		{&raftv1.Event{EventType: "ping", Status: "run"}, ColorBlue},
		{&raftv1.Event{EventType: "ping", Status: "complete"}, ColorGreen},
		{&raftv1.Event{EventType: "ping", Status: "fail"}, ColorRed},
		{&raftv1.Event{EventType: "ping", Status: "skip"}, ColorGray},
		{stream("Success"), ColorGreen},
		{stream("build completed"), ColorGreen},
		{stream("OK"), ColorGreen},
		{stream("FAILED"), ColorRed},
		{stream("error: disk full"), ColorRed},
		{stream("Starting"), ColorBlue},
		{stream("running"), ColorBlue},
		{stream("pending approval"), ColorBlue},
		{stream("queued"), ColorGray},
		{stream(""), ColorGray},
		// Table order: green keywords are looked for first.
		{stream("failed_ok"), ColorGreen},
		{stream("not ok"), ColorGreen},
		{stream("error while starting"), ColorRed},
		{&raftv1.Event{EventType: "deploy", Status: "complete", State: "success"}, ColorGray},
	} {
		if got := eventColor(tc.ev); got != tc.want {
			t.Errorf("%s %q/%q: %s, want %s", tc.ev.GetEventType(), tc.ev.GetStatus(), tc.ev.GetState(), got, tc.want)
		}
	}
}

func TestStoredEventsAreKeptAsSent(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	msg := strings.Repeat("log line ✓\n", 6000) // ~66 KB: the HTTP layer cuts, the state does not
	custom := &raftv1.Event{AccountId: "acct", Monitor: "job", EventType: "deploy", Message: msg, Host: "web-1",
		ExitCode: proto.Int64(3), ReceivedUnixMs: t0 + 5, Timestamp: proto.Int64(1_600_000_000)}
	stream := &raftv1.Event{AccountId: "acct", Monitor: "job", EventType: "stream_event", State: "Pending", ReceivedUnixMs: t0 + 6}
	rs := ingestOK(t, s, ingestNow(custom, stream))
	requireOutcomes(t, rs, stored, stored)
	evs := mustEvents(t, s, "acct", rs[0].GetMonitorUuid(), 0)
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	if e := evs[1]; !proto.Equal(e.GetEvent(), custom) || e.GetColor() != ColorGray || e.GetEventTimeUnixMs() != 1_600_000_000_000 || e.GetSeq() != 0 {
		t.Errorf("custom event stored as %v", e)
	}
	if e := evs[0]; !proto.Equal(e.GetEvent(), stream) || e.GetColor() != ColorBlue || e.GetEventTimeUnixMs() != t0+6 || e.GetSeq() != 1 {
		t.Errorf("stream event stored as %v", e)
	}
	ps := mustMonitor(t, s, "acct", "job").GetPing()
	if ps.GetEvents() != 2 || ps.GetNextSeq() != 2 || ps.GetLastPingUnixMs() != t0+6 || ps.GetLastStatus() != "Pending" {
		t.Errorf("ping state %v", ps)
	}
	// An older event does not move the last ping back.
	ingestOK(t, s, ingestNow(ping("acct", "job", "fail", t0+7, timestamp(1))))
	if ps := mustMonitor(t, s, "acct", "job").GetPing(); ps.GetLastPingUnixMs() != t0+6 || ps.GetEvents() != 3 {
		t.Errorf("ping state after an old event %v", ps)
	}
}

func TestEventsNewestFirst(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"), newAccount("other"))
	var evs []*raftv1.Event
	for i := range 300 { // seq 255 -> 256 crosses a byte of the big-endian seq
		evs = append(evs, ping("acct", "job", "skip", t0+int64(i)))
	}
	ingestOK(t, s, ingestNow(evs[:200]...))
	ingestOK(t, s, ingestNow(evs[200:]...))
	ingestOK(t, s, ingestNow(ping("acct", "job2", "skip", t0))) // a neighbour's events stay out
	id := mustMonitor(t, s, "acct", "job").GetUuid()
	for _, tc := range []struct{ limit, want int }{{0, 300}, {-1, 300}, {1, 1}, {10, 10}, {300, 300}, {301, 300}} {
		got := mustEvents(t, s, "acct", id, tc.limit)
		if len(got) != tc.want {
			t.Fatalf("limit %d: %d events, want %d", tc.limit, len(got), tc.want)
		}
		for i, e := range got {
			if e.GetSeq() != uint64(299-i) {
				t.Fatalf("limit %d: event %d has seq %d, want %d", tc.limit, i, e.GetSeq(), 299-i)
			}
		}
	}
	_, err := s.Events("other", id, 0)
	requireNotFound(t, "another account's events", err)
}

func TestRetentionByCount(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	batch := func(from, n int, keep int64) {
		var evs []*raftv1.Event
		for i := from; i < from+n; i++ {
			evs = append(evs, ping("acct", "job", "skip", t0+int64(i)))
		}
		ingestOK(t, s, ingestAt(t0, keep, evs...))
	}
	check := func(step string, wantSeqs ...uint64) {
		t.Helper()
		m := mustMonitor(t, s, "acct", "job")
		var got []uint64
		for _, e := range mustEvents(t, s, "acct", m.GetUuid(), 0) {
			got = append([]uint64{e.GetSeq()}, got...)
		}
		if !equalU64(got, wantSeqs) || m.GetPing().GetEvents() != int64(len(wantSeqs)) {
			t.Fatalf("%s: seqs %v (count %d), want %v", step, got, m.GetPing().GetEvents(), wantSeqs)
		}
		// No index key per event: one ev-due: key for the monitor.
		if due := keysWithPrefix(t, s, prefixEventDue); len(due) != 1 || due[0] != string(eventDueKey(t0, m.GetUuid())) {
			t.Fatalf("%s: ev-due: keys %q, want the first event's", step, due)
		}
	}
	batch(0, 5, 3)
	check("one batch", 2, 3, 4)
	batch(5, 1, 3)
	check("next batch", 3, 4, 5)
	batch(6, 2, 0)
	check("no retention", 3, 4, 5, 6, 7)
	// Raising the limit keeps everything; lowering it trims at most
	// len(events)+trimSlack per batch.
	batch(8, 2, 100)
	check("raised", 3, 4, 5, 6, 7, 8, 9)
	batch(10, 150, 0)
	batch(160, 150, 0)
	batch(310, 1, 2)
	if n, want := mustMonitor(t, s, "acct", "job").GetPing().GetEvents(), int64(308-1-trimSlack); n != want {
		t.Fatalf("after lowering: %d events, want %d", n, want)
	}
	batch(311, 1, 2)
	check("lowered", 310, 311)
}

func TestPruneEventsByAge(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	// Two monitors, received times interleaved; b's are out of seq order
	// (b1 was received before b0, as an agent's buffered event can be).
	ingestOK(t, s, ingestNow(
		ping("acct", "a", "skip", t0+10), ping("acct", "b", "skip", t0+40),
		ping("acct", "a", "skip", t0+20), ping("acct", "b", "skip", t0+15),
		ping("acct", "a", "skip", t0+30), ping("acct", "b", "skip", t0+50),
	))
	a, b := mustMonitor(t, s, "acct", "a").GetUuid(), mustMonitor(t, s, "acct", "b").GetUuid()
	for _, max := range []int64{0, -1, MaxPruneEvents + 1} {
		if res := apply(t, s, pruneEvents(t0+100, max))[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
			t.Fatalf("max %d: %v", max, res)
		}
	}
	steps := []struct {
		before, max int64
		deleted     int
		a, b        []uint64 // seqs left
	}{
		{t0 + 10, 5, 0, []uint64{0, 1, 2}, []uint64{0, 1, 2}}, // strictly before
		{t0 + 35, 2, 2, []uint64{2}, []uint64{0, 1, 2}},       // max 2: a0 (10), a1 (20)
		{t0 + 35, 5, 1, []uint64{}, []uint64{0, 1, 2}},        // a2 (30); b1 (15) waits for b0 (40)
		{t0 + 35, 5, 0, []uint64{}, []uint64{0, 1, 2}},        // nothing left before
		{t0 + 45, 5, 2, []uint64{}, []uint64{2}},              // b0 (40), then b1 (15)
		{t0 + 1000, 1024, 1, []uint64{}, []uint64{}},
	}
	for i, st := range steps {
		if n := pruned(t, s, st.before, st.max); n != st.deleted {
			t.Fatalf("step %d: deleted %d, want %d", i, n, st.deleted)
		}
		for _, mon := range []struct {
			id   string
			want []uint64
		}{{a, st.a}, {b, st.b}} {
			got := seqs(mustEvents(t, s, "acct", mon.id, 0))
			for l, r := 0, len(got)-1; l < r; l, r = l+1, r-1 {
				got[l], got[r] = got[r], got[l]
			}
			m, _ := s.Monitor("acct", mon.id)
			if !equalU64(got, mon.want) || m.GetPing().GetEvents() != int64(len(mon.want)) {
				t.Fatalf("step %d: monitor %s has %v (count %d), want %v", i, m.GetName(), got, m.GetPing().GetEvents(), mon.want)
			}
		}
	}
	if due := keysWithPrefix(t, s, prefixEventDue); len(due) != 0 {
		t.Fatalf("ev-due: keys left: %q", due)
	}
	// Retention still works after age pruning moved its start.
	var evs []*raftv1.Event
	for i := range 4 {
		evs = append(evs, ping("acct", "b", "skip", t0+2000+int64(i)))
	}
	ingestOK(t, s, ingestAt(t0, 2, evs...))
	if got := seqs(mustEvents(t, s, "acct", b, 0)); !equalU64(got, []uint64{6, 5}) {
		t.Fatalf("after retention: %v", got)
	}
	if n := pruned(t, s, t0+1<<40, 10); n != 2 {
		t.Fatalf("deleted %d, want 2", n)
	}
	if m, _ := s.Monitor("acct", b); m.GetPing().GetEvents() != 0 {
		t.Fatalf("count %d", m.GetPing().GetEvents())
	}
}
