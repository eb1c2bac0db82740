package state

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/pingstate"
)

func fireBatchCmd(now int64, deadlines ...*raftv1.FireDeadline) *raftv1.Command {
	return &raftv1.Command{Version: CommandVersion, TimeUnixMs: now, Op: &raftv1.Command_FireDeadlines{FireDeadlines: &raftv1.FireDeadlines{Deadlines: deadlines}}}
}

// TestFireDeadlinesAppliesEachAsAlone: a FireDeadlines leaves the monitors,
// their histories and alerts as the same deadlines applied one command each,
// with one result per deadline: fired, stale (not the monitor's deadline, or
// the one an earlier item of the batch fired), not found.
func TestFireDeadlinesAppliesEachAsAlone(t *testing.T) {
	setup := func() (*Store, []*raftv1.FireDeadline) {
		s := openStore(t)
		mustOK(t, s, newAccount("a"), createChannelCmd("a", "c1", true))
		var fds []*raftv1.FireDeadline
		for i := range 3 {
			mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{bigSpec(i, false)}, nil))
			ingestOK(t, s, ingestAt(t0, 0, ping("a", fmt.Sprint("job-", i), "complete", t0)))
			m := mustMonitor(t, s, "a", fmt.Sprint("job-", i))
			_, _, due := pingstate.Deadlines(PingSettings(m), PingState(m))
			fds = append(fds, &raftv1.FireDeadline{AccountId: "a", MonitorUuid: m.GetUuid(), Kind: pingstate.DeadlineMissed, DueUnixMs: due})
		}
		stale := proto.Clone(fds[1]).(*raftv1.FireDeadline)
		stale.DueUnixMs--
		other := proto.Clone(fds[2]).(*raftv1.FireDeadline)
		other.AccountId = "b"
		// job-0 fires, then again (stale: fired); job-1 only at a time
		// that is not its deadline; job-2 of another account, then fired.
		return s, []*raftv1.FireDeadline{fds[0], fds[0], stale, other, fds[2]}
	}
	now := t0 + 10*60_000
	alone, fds := setup()
	var want []*raftv1.Result
	for _, fd := range fds {
		want = append(want, apply(t, alone, &raftv1.Command{Version: CommandVersion, TimeUnixMs: now, Op: &raftv1.Command_FireDeadline{FireDeadline: fd}})[0])
	}
	batched, fds := setup()
	res := apply(t, batched, fireBatchCmd(now, fds...))[0]
	if res.GetStatus() != raftv1.Status_STATUS_OK || len(res.GetItems()) != len(fds) {
		t.Fatalf("batch: %v %s, %d items", res.GetStatus(), res.GetMessage(), len(res.GetItems()))
	}
	for i, got := range res.GetItems() {
		if got.GetStatus() != want[i].GetStatus() || got.GetStale() != want[i].GetStale() {
			t.Errorf("item %d: %v stale=%v, alone %v stale=%v", i, got.GetStatus(), got.GetStale(), want[i].GetStatus(), want[i].GetStale())
		}
	}
	// The outcomes the items were chosen for, so that the comparison
	// above means something: fired, fired already, not its deadline,
	// another account's, fired.
	if want[0].GetStale() || !want[1].GetStale() || !want[2].GetStale() || want[3].GetStatus() != raftv1.Status_STATUS_NOT_FOUND || want[4].GetStale() {
		t.Fatalf("alone: %v", want)
	}
	for i := range 3 {
		name := fmt.Sprint("job-", i)
		a, b := mustMonitor(t, alone, "a", name), mustMonitor(t, batched, "a", name)
		if PingState(a) != PingState(b) {
			t.Errorf("%s: batched %+v, alone %+v", name, PingState(b), PingState(a))
		}
		ea, _ := alone.Events("a", a.GetUuid(), 10)
		eb, _ := batched.Events("a", b.GetUuid(), 10)
		if len(ea) != len(eb) {
			t.Errorf("%s: %d events batched, %d alone", name, len(eb), len(ea))
		}
	}
	pa, _ := alone.PendingAlerts(0)
	pb, _ := batched.PendingAlerts(0)
	if len(pa) != 2 || len(pb) != len(pa) {
		t.Fatalf("pending alerts: batched %d, alone %d (want 2)", len(pb), len(pa))
	}
	for i := range pa {
		if pa[i].GetMonitorUuid() != pb[i].GetMonitorUuid() || pa[i].GetType() != pb[i].GetType() || len(pb[i].GetDeliveries()) != 1 {
			t.Errorf("alert %d: batched %v, alone %v", i, pb[i], pa[i])
		}
	}
}

// TestFireDeadlinesBounds: an empty batch and one over MaxFireDeadlines are
// refused, changing nothing but the applied index.
func TestFireDeadlinesBounds(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), putMonitorsCmd("a", []*raftv1.MonitorSpec{bigSpec(0, false)}, nil))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", "job-0", "complete", t0)))
	m := mustMonitor(t, s, "a", "job-0")
	_, _, due := pingstate.Deadlines(PingSettings(m), PingState(m))
	fd := &raftv1.FireDeadline{AccountId: "a", MonitorUuid: m.GetUuid(), Kind: pingstate.DeadlineMissed, DueUnixMs: due}
	over := make([]*raftv1.FireDeadline, MaxFireDeadlines+1)
	for i := range over {
		over[i] = fd
	}
	before := dumpKV(t, s, false)
	for _, c := range []*raftv1.Command{fireBatchCmd(due + 1), fireBatchCmd(due+1, over...)} {
		if res := apply(t, s, c)[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
			t.Fatalf("%d deadlines: %v %s", len(c.GetFireDeadlines().GetDeadlines()), res.GetStatus(), res.GetMessage())
		}
	}
	requireSameKV(t, before, dumpKV(t, s, false))
}

func fireBatchWorstCase() worstCase {
	var fds []*raftv1.FireDeadline
	return worstCase{
		// MaxFireDeadlines monitors of about 1 KB in a group of the most
		// channels, each missed.
		setup: func(t *testing.T, s *Store) {
			mustOK(t, s, createGroup("a", "g", "g", groupChannels(MaxGroupChannels, 4096)))
			fds = nil
			for i := range MaxFireDeadlines {
				mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{bigSpec(i, true)}, nil))
				name := fmt.Sprint("job-", i)
				ingestOK(t, s, ingestAt(t0, 0, ping("a", name, "complete", t0, func(e *raftv1.Event) { e.Message = long(64 << 10) })))
				m := mustMonitor(t, s, "a", name)
				_, _, due := pingstate.Deadlines(PingSettings(m), PingState(m))
				fds = append(fds, &raftv1.FireDeadline{AccountId: "a", MonitorUuid: m.GetUuid(), Kind: pingstate.DeadlineMissed, DueUnixMs: due})
			}
		},
		worst: func(*testing.T, *Store) *raftv1.Command {
			return cmd(fireBatchCmd(fds[0].GetDueUnixMs()+1, fds...))
		},
		want: raftv1.Status_STATUS_OK,
		over: cmd(fireBatchCmd(1, &raftv1.FireDeadline{AccountId: long(MaxKeyPartBytes + 1), MonitorUuid: "m", Kind: pingstate.DeadlineMissed, DueUnixMs: 1})),
	}
}
