// Package region is the pool of the agents of one region: they meet over
// hashicorp/memberlist (--gossip-addr, --join), and each check of the
// region runs on the live member that wins a rendezvous (highest random
// weight) hash of (check id, member id). Every member computes the same
// owner from the same membership, without asking anyone, so this works
// while the region is cut off from the control plane. When a member dies,
// memberlist declares it dead within seconds (the timings of Tuned) and
// its checks go to the members that win next; the others keep theirs.
//
// An agent without a gossip address is a region of one: it owns every
// check.
package region

import (
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// Member is a live agent of the region.
type Member struct {
	// ID is the agent's random id (its memberlist name).
	ID string
	// Name is the agent's --name (its memberlist meta).
	Name string
	// Addr is its gossip address.
	Addr string
}

// Options configures a pool.
type Options struct {
	// ID and Name are this agent's.
	ID, Name string
	// GossipAddr is host:port to gossip on (TCP and UDP; port 0 picks
	// one); "" makes a region of one.
	GossipAddr string
	// Join are gossip addresses of other agents of the region. Joining is
	// retried in the background while the agent is alone.
	Join []string
	// SecretKey, if set (16, 24 or 32 bytes), encrypts and authenticates
	// the gossip (AES-GCM): only agents with the same key meet.
	SecretKey []byte
	// RejoinInterval is the wait between join attempts while alone
	// (default 10 s).
	RejoinInterval time.Duration
	// Config, if set, adjusts memberlist's config after Tuned (tests make
	// it faster).
	Config func(*memberlist.Config)
	// OnChange is called when the set of live members changes, from
	// memberlist's goroutines under its lock: it must return at once and
	// not call the pool's memberlist.
	OnChange func()
	Logger   hclog.Logger
}

// Pool is this agent's view of its region.
type Pool struct {
	o    Options
	ml   *memberlist.Memberlist
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once // stops once, by Close or Kill

	mu      sync.RWMutex
	live    map[string]Member // by ID, from memberlist's events
	members []Member          // the same, sorted by ID
}

// Tuned returns the memberlist config of the agents: the LAN defaults
// (a probe every second, a 500 ms probe timeout) with a short suspicion
// (4 s, at most 8 s, for a region of up to 10 agents) so a member that
// died is declared dead, and its checks move, well within 15 s; and a dead
// member's name may come back from a new address after 10 s (an agent
// restarted elsewhere keeps its id).
func Tuned() *memberlist.Config {
	c := memberlist.DefaultLANConfig()
	c.ProbeInterval = time.Second
	c.ProbeTimeout = 500 * time.Millisecond
	c.SuspicionMult = 4
	c.SuspicionMaxTimeoutMult = 2
	c.DeadNodeReclaimTime = 10 * time.Second
	return c
}

// New starts the pool (memberlist, when a gossip address is given) and
// tries to join once; it does not fail when nobody answers (the others
// may start later).
func New(o Options) (*Pool, error) {
	if o.ID == "" {
		return nil, fmt.Errorf("region: the agent id is empty")
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.RejoinInterval <= 0 {
		o.RejoinInterval = 10 * time.Second
	}
	p := &Pool{o: o, stop: make(chan struct{}), live: map[string]Member{o.ID: {ID: o.ID, Name: o.Name}}, members: []Member{{ID: o.ID, Name: o.Name}}}
	if o.GossipAddr == "" {
		return p, nil
	}
	host, portStr, err := net.SplitHostPort(o.GossipAddr)
	if err != nil {
		return nil, fmt.Errorf("--gossip-addr %q: %w", o.GossipAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("--gossip-addr %q: bad port", o.GossipAddr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	logger := o.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{host}, BindPort: port, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("gossip on %s: %w", o.GossipAddr, err)
	}
	c := Tuned()
	c.Name = o.ID
	c.BindAddr, c.BindPort = host, nt.GetAutoBindPort()
	c.AdvertisePort = c.BindPort
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		c.AdvertiseAddr = host
	}
	c.Transport = nt
	c.SecretKey = o.SecretKey
	c.Logger = logger
	c.Delegate = meta(o.Name)
	c.Events = &events{p: p}
	if o.Config != nil {
		o.Config(c)
	}
	ml, err := memberlist.Create(c)
	if err != nil {
		nt.Shutdown()
		return nil, fmt.Errorf("gossip on %s: %w", o.GossipAddr, err)
	}
	p.ml = ml
	if len(o.Join) > 0 {
		p.join()
		p.wg.Go(p.rejoin)
	}
	return p, nil
}

// Addr returns the gossip address others join ("" for a region of one).
func (p *Pool) Addr() string {
	if p.ml == nil {
		return ""
	}
	n := p.ml.LocalNode()
	return net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port)))
}

// ID returns this agent's id.
func (p *Pool) ID() string { return p.o.ID }

// Members returns the live members, this agent included, by id.
func (p *Pool) Members() []Member {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Clone(p.members)
}

// MemberIDs returns the ids of the live members.
func (p *Pool) MemberIDs() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return ids(p.members)
}

// Owner returns the id of the live member that runs check checkID.
func (p *Pool) Owner(checkID string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return Owner(checkID, p.members)
}

// Owns reports whether this agent runs check checkID.
func (p *Pool) Owns(checkID string) bool { return p.Owner(checkID) == p.o.ID }

// Owner returns the id of the member of members that wins the rendezvous
// hash of checkID ("" when members is empty).
func Owner(checkID string, members []Member) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		if w := weight(checkID, m.ID); best == "" || w > bestW || w == bestW && m.ID < best {
			best, bestW = m.ID, w
		}
	}
	return best
}

// weight is the rendezvous weight of (check, member): FNV-1a of both,
// separated by a zero byte, through a 64-bit finalizer (splitmix64) so
// ids that differ in one character spread evenly.
func weight(checkID, memberID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(checkID))
	h.Write([]byte{0})
	h.Write([]byte(memberID))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// update records a join, update (alive) or leave (gone) of a member.
// Memberlist calls it under its own lock, the only time its Node may be
// read; it takes only the pool's.
func (p *Pool) update(n *memberlist.Node, alive bool) {
	m := Member{ID: n.Name, Name: string(n.Meta), Addr: n.Address()}
	p.mu.Lock()
	old, had := p.live[m.ID]
	switch {
	case alive && (!had || old != m):
		p.live[m.ID] = m
	case !alive && had && m.ID != p.o.ID:
		delete(p.live, m.ID)
	default:
		p.mu.Unlock()
		return
	}
	ms := make([]Member, 0, len(p.live))
	for _, m := range p.live {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	changed := !slices.Equal(ids(ms), ids(p.members))
	p.members = ms
	p.mu.Unlock()
	if changed && p.o.OnChange != nil {
		p.o.OnChange()
	}
}

func ids(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// join tries the join addresses once.
func (p *Pool) join() {
	n, err := p.ml.Join(p.o.Join)
	if err != nil && n == 0 {
		p.o.Logger.Warn("no agent of the region answered; running alone for now and trying again", "join", p.o.Join, "error", err)
		return
	}
	p.o.Logger.Info("joined the region's agents", "contacted", n, "members", p.ml.NumMembers())
}

// rejoin tries to join again while this agent is alone.
func (p *Pool) rejoin() {
	t := time.NewTicker(p.o.RejoinInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if p.ml.NumMembers() <= 1 {
				p.join()
			}
		}
	}
}

// Close leaves the region (the others take this agent's checks at once)
// and stops gossiping.
func (p *Pool) Close() error {
	return p.shutdown(true)
}

func (p *Pool) shutdown(leave bool) error {
	if p.ml == nil {
		return nil
	}
	var err error
	p.once.Do(func() {
		close(p.stop)
		p.wg.Wait()
		if leave {
			if err := p.ml.Leave(2 * time.Second); err != nil {
				p.o.Logger.Warn("leaving the region", "error", err)
			}
		}
		err = p.ml.Shutdown()
	})
	return err
}

// Kill stops gossiping without leaving, as a crash would (tests).
func (p *Pool) Kill() error { return p.shutdown(false) }

// events keeps the member list current.
type events struct{ p *Pool }

func (e *events) NotifyJoin(n *memberlist.Node)   { e.p.update(n, true) }
func (e *events) NotifyUpdate(n *memberlist.Node) { e.p.update(n, true) }
func (e *events) NotifyLeave(n *memberlist.Node)  { e.p.update(n, false) }

// meta is the delegate that gossips the agent's name as its meta.
type meta string

func (m meta) NodeMeta(limit int) []byte {
	b := []byte(m)
	if len(b) > limit {
		b = b[:limit]
	}
	return b
}
func (meta) NotifyMsg([]byte)                {}
func (meta) GetBroadcasts(int, int) [][]byte { return nil }
func (meta) LocalState(bool) []byte          { return nil }
func (meta) MergeRemoteState([]byte, bool)   {}
