package state

import (
	"fmt"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// putMonitorsCmd is a PutMonitors of account acct.
func putMonitorsCmd(acct string, creates, updates []*raftv1.MonitorSpec) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
		AccountId: acct, Creates: creates, Updates: updates,
	}}})
}

// minimalPings are n minimal ping monitors, as an apply of minimal entries
// makes them.
func minimalPings(n int) []*raftv1.MonitorSpec {
	out := make([]*raftv1.MonitorSpec, n)
	for i := range out {
		out[i] = &raftv1.MonitorSpec{Uuid: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Kind: KindPing, Name: fmt.Sprintf("m%d", i), Enabled: true, TimeoutSeconds: 60}
	}
	return out
}

// TestHugePutMonitorsIsRefusedNotAPanic is the reported crash: an apply of
// 60,000 minimal entries became one PutMonitors too big for one Badger
// transaction, and the state machine panicked on every node at every
// replay. It is refused as invalid, writing only the applied index.
func TestHugePutMonitorsIsRefusedNotAPanic(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	before := dumpKV(t, s, false)
	res := apply(t, s, putMonitorsCmd("a", minimalPings(60_000), nil))[0]
	if res.GetStatus() != raftv1.Status_STATUS_INVALID || res.GetCode() != CodeCommandTooLarge {
		t.Fatalf("result %v %q %s", res.GetStatus(), res.GetCode(), res.GetMessage())
	}
	requireSameKV(t, before, dumpKV(t, s, false))
	// The node keeps applying.
	mustOK(t, s, putMonitorsCmd("a", minimalPings(10), nil))
}

// TestGroupChannelsAreWhatRouteReads: every alert routed to a group reads
// its channels_json; a group stored with channels it cannot read (empty,
// not an array of objects) made the entry raising the alert fail on every
// node, at every replay. Empty is stored as no channels; the rest, and
// more than MaxGroupChannels, is refused.
func TestGroupChannelsAreWhatRouteReads(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), createGroup("a", "g0", "quiet", nil))
	for i, bad := range []string{`{"type":"slack"}`, `[1,2]`, `null`, `[{"type":"slack"}`, string(groupChannels(MaxGroupChannels+1, 4096))} {
		if res := apply(t, s, createGroup("a", fmt.Sprint("g", i+1), fmt.Sprint("bad", i), []byte(bad)))[0]; res.GetStatus() != raftv1.Status_STATUS_INVALID {
			t.Errorf("channels %.40q: %v", bad, res)
		}
	}
	quiet := bigSpec(0, false)
	quiet.NotificationGroup = "quiet"
	mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{quiet}, nil))
	ingestOK(t, s, ingestAt(t0, 0, ping("a", quiet.GetName(), "fail", t0)))
	if m := mustMonitor(t, s, "a", quiet.GetName()); !PingState(m).Alerting {
		t.Fatalf("the fail raised no alert: %+v", PingState(m))
	}
}
