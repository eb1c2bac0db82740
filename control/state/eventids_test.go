package state

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestEventIDDedupe(t *testing.T) {
	const ttl = eventIDTTLMillis
	for _, tc := range []struct {
		name    string
		batches [][]*raftv1.Event // batch i is stamped at times[i]
		times   []int64
		want    [][]raftv1.EventOutcome
		stored  int64 // events of acct's monitor at the end
	}{
		{name: "same batch",
			batches: [][]*raftv1.Event{{ping("acct", "job", "run", t0, eventID("e1")), ping("acct", "job", "run", t0, eventID("e1"))}},
			times:   []int64{t0}, want: [][]raftv1.EventOutcome{{stored, duplicate}}, stored: 1},
		{name: "later batch, other monitor and status too",
			batches: [][]*raftv1.Event{{ping("acct", "job", "run", t0, eventID("e1"))}, {ping("acct", "job2", "fail", t0, eventID("e1"))}},
			times:   []int64{t0, t0 + day}, want: [][]raftv1.EventOutcome{{stored}, {duplicate}}, stored: 1},
		{name: "another account's id is not a duplicate",
			batches: [][]*raftv1.Event{{ping("acct", "job", "run", t0, eventID("e1")), ping("other", "job", "run", t0, eventID("e1"))}},
			times:   []int64{t0}, want: [][]raftv1.EventOutcome{{stored, stored}}, stored: 1},
		{name: "ids with ':' and the account separator",
			batches: [][]*raftv1.Event{{ping("acct", "job", "run", t0, eventID("a:b")), ping("acct", "job", "run", t0, eventID("a")), ping("acct", "job", "run", t0, eventID("a:b"))}},
			times:   []int64{t0}, want: [][]raftv1.EventOutcome{{stored, stored, duplicate}}, stored: 2},
		{name: "no id: never a duplicate",
			batches: [][]*raftv1.Event{{ping("acct", "job", "run", t0), ping("acct", "job", "run", t0)}},
			times:   []int64{t0}, want: [][]raftv1.EventOutcome{{stored, stored}}, stored: 2},
		{name: "7 days exactly: still a duplicate",
			batches: [][]*raftv1.Event{{ping("acct", "job", "run", t0, eventID("e1"))}, {ping("acct", "job", "run", t0, eventID("e1"))}},
			times:   []int64{t0, t0 + ttl}, want: [][]raftv1.EventOutcome{{stored}, {duplicate}}, stored: 1},
		{name: "after 7 days: stored again",
			batches: [][]*raftv1.Event{{ping("acct", "job", "run", t0, eventID("e1"))}, {ping("acct", "job", "run", t0, eventID("e1"))}, {ping("acct", "job", "run", t0, eventID("e1"))}},
			times:   []int64{t0, t0 + ttl + 1, t0 + ttl + 2}, want: [][]raftv1.EventOutcome{{stored}, {stored}, {duplicate}}, stored: 2},
		{name: "a refused event's id is not remembered",
			batches: [][]*raftv1.Event{{ping("acct", "new", "run", t0, eventID("e1")), ping("acct", "job", "run", t0, eventID("e1"))}},
			times:   []int64{t0}, want: [][]raftv1.EventOutcome{{limited, stored}}, stored: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			mustOK(t, s, newAccount("acct"), newAccount("other"))
			ingestOK(t, s, ingestNow(ping("acct", "job", "skip", t0)))                 // the monitor exists...
			mustOK(t, s, setPlan("acct", limits(proto.Int64(1), proto.Int64(100), 0))) // ...at the limit
			for i, b := range tc.batches {
				rs := ingestOK(t, s, ingestAt(tc.times[i], 0, b...))
				requireOutcomes(t, rs, tc.want[i]...)
				for j, r := range rs {
					if r.GetOutcome() == duplicate && (r.GetQuota().GetState() != QuotaOK || r.GetMonitorUuid() != "") {
						t.Errorf("batch %d event %d: duplicate answered %v", i, j, r)
					}
				}
			}
			m := mustMonitor(t, s, "acct", "job")
			if m.GetPing().GetEvents()-1 != tc.stored {
				t.Errorf("%d events stored, want %d", m.GetPing().GetEvents()-1, tc.stored)
			}
			if _, used, _ := s.Usage("acct", t0); used != tc.stored+1 {
				t.Errorf("quota counted %d, want %d", used, tc.stored+1)
			}
			if ids, times := len(keysWithPrefix(t, s, prefixEventID)), len(keysWithPrefix(t, s, prefixEventIDTime)); ids != times {
				t.Errorf("%d ids, %d time keys", ids, times)
			}
		})
	}
}

func TestEventIDPruning(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("acct"))
	n := 2*IngestBatchMaxEvents + 10
	for i := 0; i < n; i += IngestBatchMaxEvents {
		var evs []*raftv1.Event
		for j := i; j < min(n, i+IngestBatchMaxEvents); j++ {
			evs = append(evs, ping("acct", "job", "skip", t0, eventID(fmt.Sprintf("id-%04d", j))))
		}
		requireOutcomes(t, ingestOK(t, s, ingestAt(t0+int64(i), 0, evs...))[:1], stored)
	}
	count := func() int {
		ids, times := len(keysWithPrefix(t, s, prefixEventID)), len(keysWithPrefix(t, s, prefixEventIDTime))
		if ids != times {
			t.Fatalf("%d ids, %d time keys", ids, times)
		}
		return ids
	}
	if c := count(); c != n {
		t.Fatalf("%d ids remembered, want %d", c, n)
	}
	late := t0 + eventIDTTLMillis + int64(n)
	// Ingest prunes nothing; PruneEvents prunes up to max, oldest first.
	ingestOK(t, s, ingestAt(late, 0))
	if c := count(); c != n {
		t.Fatalf("an ingest entry pruned: %d ids, want %d", c, n)
	}
	mustOK(t, s, pruneAt(late, 0, 100))
	if c := count(); c != n-100 {
		t.Fatalf("after a prune of 100: %d ids, want %d", c, n-100)
	}
	if left := keysWithPrefix(t, s, prefixEventID); left[0] != "evid:acct:id-0100" {
		t.Fatalf("oldest id left %q", left[0])
	}
	// An expired id not pruned yet is no duplicate; storing it again
	// replaces its time key.
	last := fmt.Sprintf("id-%04d", n-1)
	rs := ingestOK(t, s, ingestAt(late, 0, ping("acct", "job", "skip", late, eventID(last)), ping("acct", "job", "skip", late, eventID(last))))
	requireOutcomes(t, rs, stored, duplicate)
	if c := count(); c != n-100 {
		t.Fatalf("after storing an expired id again: %d ids, want %d", c, n-100)
	}
	if !slices.Contains(keysWithPrefix(t, s, prefixEventIDTime), string(eventIDTimeKey(late, "acct", last))) {
		t.Fatal("the id's time key was not renewed")
	}
}
