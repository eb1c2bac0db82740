package state

import (
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// TestStoredBadGroupChannelsRouteNowhere: a group stored with channels_json
// route cannot read (written here directly: CreateNotificationGroup refuses
// it) routes its alerts nowhere instead of failing the entry that raises
// them, which would stop every node.
func TestStoredBadGroupChannelsRouteNowhere(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	for i, bad := range []string{``, `{`, `null`, `{"type":"slack"}`, `[1,2]`} {
		gid, name := fmt.Sprint("g", i), fmt.Sprint("grp", i)
		mustOK(t, s, createGroup("a", gid, name, []byte(`[{"type":"slack"}]`)))
		if err := s.db().Update(func(txn *badger.Txn) error {
			var g statev1.NotificationGroup
			if err := getProto(txn, k(prefixGroup, "a", gid), &g); err != nil {
				return err
			}
			g.ChannelsJson = []byte(bad)
			return setProto(txn, k(prefixGroup, "a", gid), &g)
		}); err != nil {
			t.Fatal(err)
		}
		spec := bigSpec(i, false)
		spec.NotificationGroup = name
		mustOK(t, s, putMonitorsCmd("a", []*raftv1.MonitorSpec{spec}, nil))
		ingestOK(t, s, ingestAt(t0, 0, ping("a", spec.GetName(), "fail", t0)))
		if m := mustMonitor(t, s, "a", spec.GetName()); !PingState(m).Alerting {
			t.Fatalf("channels %q: the fail raised no alert: %+v", bad, PingState(m))
		}
		if pending, err := s.PendingAlerts(100); err != nil || len(pending) != 0 {
			t.Fatalf("channels %q: pending alerts %v, %v; want none", bad, pending, err)
		}
	}
}
