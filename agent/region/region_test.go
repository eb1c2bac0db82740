package region_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"lookout/agent/region"
)

// fast makes memberlist detect a dead member in about two seconds, with
// timeouts loose enough for a loaded machine running the race detector.
func fast(c *memberlist.Config) {
	c.ProbeInterval = 250 * time.Millisecond
	c.ProbeTimeout = 200 * time.Millisecond
	c.GossipInterval = 50 * time.Millisecond
	c.PushPullInterval = time.Second
	c.SuspicionMult = 3
	c.SuspicionMaxTimeoutMult = 2
	c.TCPTimeout = time.Second
}

// views returns each pool's members, failing unless they all agree.
func views(t *testing.T, ps []*region.Pool) []region.Member {
	t.Helper()
	first := ps[0].Members()
	for _, p := range ps[1:] {
		if got := p.Members(); fmt.Sprint(ids(got)) != fmt.Sprint(ids(first)) {
			t.Fatalf("%s sees %v, %s sees %v", ps[0].ID(), ids(first), p.ID(), ids(got))
		}
	}
	return first
}

func ids(ms []region.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// pools starts n agents of one region on loopback, each joining the
// first; tune adjusts memberlist (nil: the production timings).
func pools(t *testing.T, n int, tune func(*memberlist.Config)) []*region.Pool {
	t.Helper()
	var ps []*region.Pool
	for i := range n {
		o := region.Options{ID: fmt.Sprintf("ag_%d", i), Name: fmt.Sprintf("edge-%d", i), GossipAddr: "127.0.0.1:0", Config: tune, RejoinInterval: 200 * time.Millisecond}
		if i > 0 {
			o.Join = []string{ps[0].Addr()}
		}
		p, err := region.New(o)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
		t.Cleanup(func() { p.Kill() })
	}
	waitMembers(t, ps, n, 10*time.Second)
	return ps
}

func waitMembers(t *testing.T, ps []*region.Pool, n int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok := true
		for _, p := range ps {
			if len(p.Members()) != n {
				ok = false
			}
		}
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > within {
			for _, p := range ps {
				t.Logf("%s sees %v", p.ID(), p.MemberIDs())
			}
			t.Fatalf("the pools did not all see %d members within %s", n, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("0198c0de-%04d-7000-8000-000000000000", i)
	}
	return ids
}

// TestDeadMemberChecksMove: three agents agree on who runs each check;
// when one dies (no leave), the two others take exactly its checks, and
// agree again.
func TestDeadMemberChecksMove(t *testing.T) {
	testMove(t, fast, 15*time.Second)
}

// TestDeadMemberChecksMoveTuned is the same with the timings the agent
// really uses: the checks move within 15 s.
func TestDeadMemberChecksMoveTuned(t *testing.T) {
	if testing.Short() {
		t.Skip("takes several seconds")
	}
	d := testMove(t, nil, 15*time.Second)
	t.Logf("a dead member's checks moved after %s", d)
}

func testMove(t *testing.T, tune func(*memberlist.Config), within time.Duration) time.Duration {
	ps := pools(t, 3, tune)
	checks := checkIDs(300)
	members := views(t, ps)
	before := map[string]string{}
	count := map[string]int{}
	for _, id := range checks {
		o := region.Owner(id, members)
		for _, p := range ps {
			if p.Owns(id) != (p.ID() == o) {
				t.Fatalf("check %s: %s disagrees about its owner %s (members %v)", id, p.ID(), o, p.MemberIDs())
			}
		}
		before[id] = o
		count[o]++
	}
	for _, p := range ps {
		if count[p.ID()] < 50 {
			t.Fatalf("uneven spread: %v", count)
		}
	}
	dead := ps[1]
	dead.Kill()
	live := []*region.Pool{ps[0], ps[2]}
	took := waitMembers(t, live, 2, within)
	after := views(t, live)
	for _, id := range checks {
		o := region.Owner(id, after)
		switch {
		case o == dead.ID():
			t.Fatalf("check %s still on the dead member", id)
		case before[id] != dead.ID() && o != before[id]:
			t.Fatalf("check %s moved from live %s to %s", id, before[id], o)
		}
	}
	return took
}

// TestLeaveMovesAtOnce: an agent that stops cleanly leaves, and the
// others see it gone without waiting for the failure detector.
func TestLeaveMovesAtOnce(t *testing.T) {
	ps := pools(t, 2, nil)
	if err := ps[1].Close(); err != nil {
		t.Fatal(err)
	}
	waitMembers(t, ps[:1], 1, 3*time.Second)
}

// TestLateJoin: an agent whose join target is not up yet keeps trying and
// meets it when it comes.
func TestLateJoin(t *testing.T) {
	a, err := region.New(region.Options{ID: "ag_a", GossipAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := a.Addr()
	a.Kill()
	b, err := region.New(region.Options{ID: "ag_b", GossipAddr: "127.0.0.1:0", Join: []string{addr}, RejoinInterval: 100 * time.Millisecond, Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	if len(b.Members()) != 1 {
		t.Fatal("b is not alone")
	}
	a2, err := region.New(region.Options{ID: "ag_a", GossipAddr: addr, Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Kill()
	waitMembers(t, []*region.Pool{a2, b}, 2, 10*time.Second)
}

// TestRegionOfOne: without a gossip address the agent owns everything.
func TestRegionOfOne(t *testing.T) {
	p, err := region.New(region.Options{ID: "ag_1", Name: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, id := range checkIDs(20) {
		if !p.Owns(id) {
			t.Fatalf("a region of one does not own %s", id)
		}
	}
	if m := p.Members(); len(m) != 1 || m[0].Name != "edge" {
		t.Fatalf("members %v", m)
	}
}

// TestOwnerStable: the rendezvous hash depends on the members only, not
// their order, and adding a member only takes checks to it.
func TestOwnerStable(t *testing.T) {
	a, b, c := region.Member{ID: "ag_a"}, region.Member{ID: "ag_b"}, region.Member{ID: "ag_c"}
	for _, id := range checkIDs(200) {
		o := region.Owner(id, []region.Member{a, b})
		if region.Owner(id, []region.Member{b, a}) != o {
			t.Fatal("the owner depends on the order of the members")
		}
		if n := region.Owner(id, []region.Member{a, b, c}); n != o && n != "ag_c" {
			t.Fatalf("adding ag_c moved %s from %s to %s", id, o, n)
		}
	}
	if region.Owner("x", nil) != "" {
		t.Fatal("an owner without members")
	}
}

// TestGossipKey: agents with the same key meet; one with another key
// (or none) does not.
func TestGossipKey(t *testing.T) {
	k1 := []byte("0123456789abcdef")
	k2 := []byte("fedcba9876543210")
	a, err := region.New(region.Options{ID: "ag_a", GossipAddr: "127.0.0.1:0", SecretKey: k1, Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Kill()
	b, err := region.New(region.Options{ID: "ag_b", GossipAddr: "127.0.0.1:0", SecretKey: k1, Join: []string{a.Addr()}, Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	waitMembers(t, []*region.Pool{a, b}, 2, 10*time.Second)
	for i, key := range [][]byte{k2, nil} {
		c, err := region.New(region.Options{ID: fmt.Sprintf("ag_c%d", i), GossipAddr: "127.0.0.1:0", SecretKey: key, Join: []string{a.Addr()}, Config: fast, RejoinInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if len(c.Members()) != 1 || len(a.Members()) != 2 {
			t.Fatalf("an agent with key %q met the region: %v / %v", key, c.MemberIDs(), a.MemberIDs())
		}
		c.Kill()
	}
}
