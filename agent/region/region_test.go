package region_test

import (
	"fmt"
	"io"
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

// key is the region's gossip key in these tests.
var key = []byte("0123456789abcdef0123456789abcdef")

// pools starts n agents of one region on loopback, each joining the
// first; tune adjusts memberlist (nil: the production timings).
func pools(t *testing.T, n int, tune func(*memberlist.Config)) []*region.Pool {
	t.Helper()
	var ps []*region.Pool
	for i := range n {
		o := region.Options{ID: fmt.Sprintf("ag_%d", i), Name: fmt.Sprintf("edge-%d", i), GossipAddr: "127.0.0.1:0", Config: tune, RejoinInterval: 200 * time.Millisecond,
			SecretKey: key, TokenID: "tok"}
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
	t.Parallel()
	testMove(t, fast, 15*time.Second)
}

// TestDeadMemberChecksMoveTuned is the same with the timings the agent
// really uses: the checks move within 15 s.
func TestDeadMemberChecksMoveTuned(t *testing.T) {
	t.Parallel()
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
		o := region.Owner(id, nil, members)
		for _, p := range ps {
			if p.Owns(id, nil) != (p.ID() == o) || p.Owns(id, []string{"tok"}) != (p.ID() == o) {
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
		o := region.Owner(id, nil, after)
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
	t.Parallel()
	ps := pools(t, 2, nil)
	if err := ps[1].Close(); err != nil {
		t.Fatal(err)
	}
	waitMembers(t, ps[:1], 1, 3*time.Second)
}

// TestLateJoin: an agent whose join target is not up yet keeps trying and
// meets it when it comes.
func TestLateJoin(t *testing.T) {
	t.Parallel()
	a, err := region.New(region.Options{ID: "ag_a", GossipAddr: "127.0.0.1:0", SecretKey: key})
	if err != nil {
		t.Fatal(err)
	}
	addr := a.Addr()
	a.Kill()
	b, err := region.New(region.Options{ID: "ag_b", GossipAddr: "127.0.0.1:0", SecretKey: key, Join: []string{addr}, RejoinInterval: 100 * time.Millisecond, Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	if len(b.Members()) != 1 {
		t.Fatal("b is not alone")
	}
	a2, err := region.New(region.Options{ID: "ag_a", GossipAddr: addr, SecretKey: key, Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Kill()
	waitMembers(t, []*region.Pool{a2, b}, 2, 10*time.Second)
}

// TestRegionOfOne: without a gossip address the agent owns everything.
func TestRegionOfOne(t *testing.T) {
	t.Parallel()
	p, err := region.New(region.Options{ID: "ag_1", Name: "edge"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.State() != region.GossipOff {
		t.Fatalf("state %s", p.State())
	}
	for _, id := range checkIDs(20) {
		if !p.Owns(id, nil) {
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
	t.Parallel()
	a, b, c := region.Member{ID: "ag_a"}, region.Member{ID: "ag_b"}, region.Member{ID: "ag_c"}
	for _, id := range checkIDs(200) {
		o := region.Owner(id, nil, []region.Member{a, b})
		if region.Owner(id, nil, []region.Member{b, a}) != o {
			t.Fatal("the owner depends on the order of the members")
		}
		if n := region.Owner(id, nil, []region.Member{a, b, c}); n != o && n != "ag_c" {
			t.Fatalf("adding ag_c moved %s from %s to %s", id, o, n)
		}
	}
	if region.Owner("x", nil, nil) != "" {
		t.Fatal("an owner without members")
	}
}

// TestGossipKey: agents with the region's key meet; one with another key,
// a bare memberlist without a key, or a pool still waiting for its key,
// does not meet them, and takes no check: the region's two agents still
// own every check between them.
func TestGossipKey(t *testing.T) {
	t.Parallel()
	other := []byte("fedcba9876543210fedcba9876543210")
	a, err := region.New(region.Options{ID: "ag_a", GossipAddr: "127.0.0.1:0", SecretKey: key, TokenID: "tok", Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Kill()
	b, err := region.New(region.Options{ID: "ag_b", GossipAddr: "127.0.0.1:0", SecretKey: key, TokenID: "tok", Join: []string{a.Addr()}, Config: fast})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Kill()
	waitMembers(t, []*region.Pool{a, b}, 2, 10*time.Second)
	if a.State() != region.GossipOn {
		t.Fatalf("state %s", a.State())
	}

	// Another key.
	c, err := region.New(region.Options{ID: "ag_c", GossipAddr: "127.0.0.1:0", SecretKey: other, TokenID: "tok", Join: []string{a.Addr()}, Config: fast, RejoinInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	// A bare memberlist without a key, as a process without a token
	// would run.
	bare := memberlist.DefaultLANConfig()
	bare.Name, bare.BindAddr, bare.BindPort, bare.AdvertisePort = "ag_bare", "127.0.0.1", 0, 0
	bare.LogOutput = io.Discard
	fast(bare)
	ml, err := memberlist.Create(bare)
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Shutdown()
	if n, err := ml.Join([]string{a.Addr()}); err == nil || n != 0 {
		t.Fatalf("a bare memberlist joined the region: %d, %v", n, err)
	}
	// A pool without its key yet: it binds its address but does not
	// gossip, and nobody can join it.
	d, err := region.New(region.Options{ID: "ag_d", GossipAddr: "127.0.0.1:0", Join: []string{a.Addr()}, Config: fast, RejoinInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Kill()
	if d.State() != region.GossipWaitingForKey || d.Addr() == "" {
		t.Fatalf("a pool without its key: state %s addr %q", d.State(), d.Addr())
	}
	e, err := region.New(region.Options{ID: "ag_e", GossipAddr: "127.0.0.1:0", SecretKey: key, TokenID: "tok", Join: []string{d.Addr()}, Config: fast, RejoinInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Kill()

	time.Sleep(time.Second)
	if len(c.Members()) != 1 || len(d.Members()) != 1 || len(e.Members()) != 1 || ml.NumMembers() != 1 || len(a.Members()) != 2 || len(b.Members()) != 2 {
		t.Fatalf("outsiders met the region: a %v, b %v, other key %v, waiting %v, joining the waiting one %v, bare %d",
			a.MemberIDs(), b.MemberIDs(), c.MemberIDs(), d.MemberIDs(), e.MemberIDs(), ml.NumMembers())
	}
	for _, id := range checkIDs(100) {
		if o := a.Owner(id, []string{"tok"}); o != "ag_a" && o != "ag_b" || b.Owner(id, []string{"tok"}) != o {
			t.Fatalf("check %s: a says %s, b says %s", id, o, b.Owner(id, []string{"tok"}))
		}
	}

	// Once the waiting pool gets the key, it meets the region (and the
	// agent that was trying to join it).
	if err := d.SetKey(key, "tok"); err != nil {
		t.Fatal(err)
	}
	waitMembers(t, []*region.Pool{a, b, d, e}, 4, 10*time.Second)
	if d.State() != region.GossipOn {
		t.Fatalf("state %s after SetKey", d.State())
	}
}

// TestKeyChange: when the region's key changes (the cluster secret did),
// agents that take the new one one after the other stay in one pool, and
// a newcomer with only the new key joins them.
func TestKeyChange(t *testing.T) {
	t.Parallel()
	ps := pools(t, 2, fast)
	next := []byte("fedcba9876543210fedcba9876543210")
	for _, p := range ps {
		if err := p.SetKey(next, "tok"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		waitMembers(t, ps, 2, 5*time.Second)
	}
	c, err := region.New(region.Options{ID: "ag_c", GossipAddr: "127.0.0.1:0", SecretKey: next, TokenID: "tok", Join: []string{ps[0].Addr()}, Config: fast, RejoinInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill()
	waitMembers(t, append(ps, c), 3, 10*time.Second)
}

// TestPlacementByToken: agents of tokens of different accounts share a
// pool; each check runs only on the live members of the tokens that
// serve its account, and all agree on which. A member that changes token
// is placed by its new one.
func TestPlacementByToken(t *testing.T) {
	t.Parallel()
	var ps []*region.Pool
	for i, tok := range []string{"tok-a", "tok-all", "tok-all"} {
		o := region.Options{ID: fmt.Sprintf("ag_%d", i), Name: fmt.Sprintf("edge-%d", i), GossipAddr: "127.0.0.1:0", Config: fast,
			RejoinInterval: 100 * time.Millisecond, SecretKey: key, TokenID: tok}
		if i > 0 {
			o.Join = []string{ps[0].Addr()}
		}
		p, err := region.New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Kill() })
		ps = append(ps, p)
	}
	waitMembers(t, ps, 3, 10*time.Second)
	members := views(t, ps)
	if members[0].TokenID != "tok-a" || members[1].TokenID != "tok-all" || members[0].Name != "edge-0" {
		t.Fatalf("members %+v", members)
	}
	ofA, ofB := []string{"tok-a", "tok-all"}, []string{"tok-all"}
	owners := map[string]int{}
	for _, id := range checkIDs(300) {
		a, b := region.Owner(id, ofA, members), region.Owner(id, ofB, members)
		owners[a]++
		if b == "ag_0" || b == "" {
			t.Fatalf("a check of B placed on %q", b)
		}
		for _, p := range ps {
			if p.Owns(id, ofA) != (p.ID() == a) || p.Owns(id, ofB) != (p.ID() == b) {
				t.Fatalf("check %s: %s disagrees", id, p.ID())
			}
		}
	}
	if owners["ag_0"] < 50 || owners["ag_1"] < 50 || owners["ag_2"] < 50 {
		t.Fatalf("A's checks spread %v", owners)
	}

	// ag_0 comes back with a token of every account.
	if err := ps[0].SetKey(key, "tok-all"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := true
		for _, p := range ps {
			if p.Members()[0].TokenID != "tok-all" {
				ok = false
			}
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new token was not gossiped: %+v", ps[1].Members())
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := 0
	for _, id := range checkIDs(300) {
		if ps[1].Owner(id, ofB) == "ag_0" {
			took++
		}
	}
	if took == 0 {
		t.Fatal("ag_0 runs no check of B with a token of every account")
	}
}
