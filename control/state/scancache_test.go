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
