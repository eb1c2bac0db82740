package state

import (
	"fmt"
	"sort"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

// scanWorkload raises alerts between changes of the account's channels and
// maintenance windows, in one transaction and across transactions, so that
// the cached scans are used where they are still true and dropped where
// they are not.
func scanWorkload(t *testing.T, s *Store) []*raftv1.Result {
	t.Helper()
	mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
	fds := make([]*raftv1.FireDeadline, 6)
	for i := range fds {
		mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{bigSpec(i, false)}, nil))
		ingestOK(t, s, ingestAt(t0, 0, ping("a", fmt.Sprint("job-", i), "complete", t0)))
		m := mustMonitor(t, s, "a", fmt.Sprint("job-", i))
		_, _, due := pingstate.Deadlines(PingSettings(m), PingState(m))
		fds[i] = &raftv1.FireDeadline{AccountId: "a", MonitorUuid: m.GetUuid(), Kind: pingstate.DeadlineMissed, DueUnixMs: due}
	}
	now := fds[0].GetDueUnixMs() + 1
	fire := func(i int) *raftv1.Command { return fireBatchCmd(now, fds[i]) }
	res := apply(t, s,
		fire(0), // to c1
		createChannelCmd("a", "c2", true),
		fire(1), // to c1 and c2
		putWindowCmd(now, true, oneOff("w1", t0, now+hour, nil)),
		fire(2), // held
		deleteWindowCmd(now, "a", "w1"),
		fire(3), // to c1 and c2
		updateChannelCmd("a", "c1", "webhook", "c1", `{"url":"https://example.com/hook"}`, false),
		fire(4), // to c2
	)
	res = append(res, apply(t, s, fire(5))...) // to c2, from the committed scans
	return res
}

// TestScanCacheCoherent: the workload gives the same results and state
// with the cache and without, and the alerts go where the channels and
// windows of their moment say.
func TestScanCacheCoherent(t *testing.T) {
	with, res := withAndWithoutCache(t, scanWorkload)
	for i, r := range res {
		if r.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("entry %d: %v %s", i, r.GetStatus(), r.GetMessage())
		}
	}
	pending, err := with.PendingAlerts(0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, a := range pending {
		m, err := with.MonitorByUUID(a.GetMonitorUuid())
		if err != nil {
			t.Fatal(err)
		}
		var refs []string
		for _, d := range a.GetDeliveries() {
			refs = append(refs, d.GetChannelRef())
		}
		sort.Strings(refs)
		got[m.GetName()] = refs
	}
	want := map[string]string{"job-0": "[chan:c1]", "job-1": "[chan:c1 chan:c2]", "job-3": "[chan:c1 chan:c2]", "job-4": "[chan:c2]", "job-5": "[chan:c2]"}
	for name, refs := range want {
		if fmt.Sprint(got[name]) != refs {
			t.Errorf("%s: deliveries %v, want %s", name, got[name], refs)
		}
	}
	if _, ok := got["job-2"]; ok {
		t.Errorf("job-2 alerted inside the window: %v", got["job-2"])
	}
}

// historyWorkload records deliveries of more alerts than a channel's
// history keeps, some in one transaction and some across, with a repeat
// record and the channel deleted and made again in between.
func historyWorkload(t *testing.T, s *Store) []*raftv1.Result {
	t.Helper()
	mustOK(t, s, newAccount("a"), uncapped("a"), createChannelCmd("a", "c1", true))
	raise := func(from, n int) []string {
		for i := from; i < from+n; i++ {
			ingestOK(t, s, ingestAt(t0, 0, ping("a", fmt.Sprint("job-", i), "fail", t0+int64(i))))
		}
		pending, err := s.PendingAlerts(0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range pending {
			ids = append(ids, a.GetId())
		}
		sort.Strings(ids)
		return ids
	}
	record := func(id string, delivered bool) *raftv1.Command {
		return cmd(&raftv1.Command{Op: &raftv1.Command_RecordDelivery{RecordDelivery: &raftv1.RecordDelivery{AlertId: id, ChannelRef: "chan:c1", Delivered: delivered, NextTryUnixMs: t0 + hour}}})
	}
	var res []*raftv1.Result
	ids := raise(0, MaxChannelHistory+10)
	var first []*raftv1.Command
	for _, id := range ids[:60] {
		first = append(first, record(id, false)) // retrying: recorded again below
	}
	res = append(res, apply(t, s, first...)...)
	for _, id := range ids[:80] {
		res = append(res, apply(t, s, record(id, true))...)
	}
	var rest []*raftv1.Command
	for _, id := range ids[80:] {
		rest = append(rest, record(id, true))
	}
	res = append(res, apply(t, s, rest...)...)
	if h, err := s.ChannelHistory("a", "c1"); err != nil || len(h) != MaxChannelHistory {
		t.Fatalf("a full history: %d records, %v", len(h), err)
	}
	res = append(res, apply(t, s, deleteChannelCmd("a", "c1"), createChannelCmd("a", "c1", true))...)
	ids = raise(MaxChannelHistory+10, 3)
	for _, id := range ids {
		res = append(res, apply(t, s, record(id, true))...)
	}
	return res
}

// TestHistoryCacheCoherent: the channel history kept through the cached
// scans is the one kept without them, at most MaxChannelHistory records.
func TestHistoryCacheCoherent(t *testing.T) {
	with, _ := withAndWithoutCache(t, historyWorkload)
	h, err := with.ChannelHistory("a", "c1")
	if err != nil || len(h) != 3 {
		t.Fatalf("history after the channel was made again: %d records, %v", len(h), err)
	}
}
