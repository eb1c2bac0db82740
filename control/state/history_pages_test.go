package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestEventsBeforePagesTheWholeHistory reads a monitor's 25 events in
// pages of 10 with EventsBefore: every event once, newest first.
func TestEventsBeforePagesTheWholeHistory(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	var evs []*raftv1.Event
	for i := range 25 {
		evs = append(evs, &raftv1.Event{AccountId: "acct", Monitor: "job", EventType: "ping", Status: "complete", ReceivedUnixMs: t0 + int64(i)})
	}
	rs := ingestOK(t, s, ingestNow(evs...))
	id := rs[0].GetMonitorUuid()
	var seqs []uint64
	before := uint64(NewestEvents)
	for range 10 {
		page, err := s.EventsBefore("acct", id, before, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			seqs = append(seqs, e.GetSeq())
		}
		before = page[len(page)-1].GetSeq()
	}
	if len(seqs) != 25 {
		t.Fatalf("read %d events: %v", len(seqs), seqs)
	}
	for i, seq := range seqs {
		if seq != uint64(24-i) {
			t.Fatalf("event %d has seq %d: %v", i, seq, seqs)
		}
	}
	if page, _ := s.EventsBefore("acct", id, 0, 10); len(page) != 0 {
		t.Fatalf("before seq 0: %d events", len(page))
	}
	if _, err := s.EventsBefore("other", id, NewestEvents, 10); err != ErrNotFound {
		t.Fatalf("another account: %v", err)
	}
}

// TestExecutionsBeforePagesTheWholeHistory reads a check's executions of
// two regions in pages of 3: every one once, newest slot first.
func TestExecutionsBeforePagesTheWholeHistory(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	putCheck(t, s, KindHTTPCheck, true, true)
	for i := range int64(4) {
		a, b := execution(t0+i*60_000, ExecSuccess), execution(t0+i*60_000, ExecSuccess)
		b.Region = "eu-1"
		mustOK(t, s, recordCmd(100, a, b))
	}
	var got []ExecutionPos
	var before *ExecutionPos
	for range 10 {
		page, err := s.ExecutionsBefore("a", checkID, before, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			got = append(got, PosOf(e))
		}
		last := PosOf(page[len(page)-1])
		before = &last
	}
	if len(got) != 8 {
		t.Fatalf("read %d executions: %v", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.SlotMs < b.SlotMs || (a.SlotMs == b.SlotMs && a.Region <= b.Region) {
			t.Fatalf("not newest first, each once: %v", got)
		}
	}
}
