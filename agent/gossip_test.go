package agent_test

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"lookout/agent/agenttest"
	"lookout/agent/region"
)

// TestRegionGossipsOnlyWithTheControlPlanesKey: two agents of a region
// that have never reached the control plane bind their gossip address but
// do not gossip; once the stream hands them the region's key they meet,
// and a memberlist without the key cannot join them (so it could take no
// check). One of them, restarted while the control plane is down, gossips
// with the key from its last assignments on disk and meets the other
// again.
func TestRegionGossipsOnlyWithTheControlPlanesKey(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.Close() // not reachable yet
	a := startGossiping(t, t.TempDir(), region.Options{GossipAddr: "127.0.0.1:0"}, cp.URL())
	bDir := t.TempDir()
	b := startGossiping(t, bDir, region.Options{GossipAddr: "127.0.0.1:0", Join: []string{a.pool.Addr()}, RejoinInterval: 100 * time.Millisecond}, cp.URL())
	time.Sleep(500 * time.Millisecond)
	if len(a.pool.Members()) != 1 || len(b.pool.Members()) != 1 || a.pool.State() != region.GossipWaitingForKey {
		t.Fatalf("agents without the region's key met: %v / %v (%s)", a.pool.MemberIDs(), b.pool.MemberIDs(), a.pool.State())
	}

	key := []byte("0123456789abcdef0123456789abcdef")
	up := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	up.SetGossip(key, "tok-1")
	a.stop()
	b.stop()
	a = startGossiping(t, t.TempDir(), region.Options{GossipAddr: "127.0.0.1:0"}, up.URL())
	b = startGossiping(t, bDir, region.Options{GossipAddr: "127.0.0.1:0", Join: []string{a.pool.Addr()}, RejoinInterval: 100 * time.Millisecond}, up.URL())
	eventually(t, "the agents meet with the key", func() bool {
		return len(a.pool.Members()) == 2 && len(b.pool.Members()) == 2
	})
	if m := a.pool.Members(); m[0].TokenID != "tok-1" || m[1].TokenID != "tok-1" {
		t.Fatalf("members %+v", m)
	}

	bare := memberlist.DefaultLANConfig()
	bare.Name, bare.BindAddr, bare.BindPort, bare.AdvertisePort = "ag_intruder", "127.0.0.1", 0, 0
	bare.LogOutput = io.Discard
	ml, err := memberlist.Create(bare)
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Shutdown()
	if n, err := ml.Join([]string{a.pool.Addr()}); err == nil || n != 0 {
		t.Fatalf("a memberlist without the key joined the region: %d %v", n, err)
	}
	time.Sleep(500 * time.Millisecond)
	if len(a.pool.Members()) != 2 || len(b.pool.Members()) != 2 || ml.NumMembers() != 1 {
		t.Fatalf("after the intruder: %v / %v / %d", a.pool.MemberIDs(), b.pool.MemberIDs(), ml.NumMembers())
	}

	// Cut off and restarted: the key comes from disk.
	up.Close()
	b.stop()
	b = startGossiping(t, bDir, region.Options{GossipAddr: "127.0.0.1:0", Join: []string{a.pool.Addr()}, RejoinInterval: 100 * time.Millisecond}, up.URL())
	eventually(t, "the restarted agent meets the other with the key from disk", func() bool {
		return len(a.pool.Members()) == 2 && len(b.pool.Members()) == 2 && b.pool.State() == region.GossipOn
	})
}
