// Package region is the pool of the agents of one region: they meet over
// hashicorp/memberlist (--gossip-addr, --join), and each check of the
// region runs on the live member that wins a rendezvous (highest random
// weight) hash of (check id, member id). Every member computes the same
// owner from the same membership, without asking anyone, so this works
// while the region is cut off from the control plane. When a member dies,
// memberlist declares it dead within seconds (the timings of Tuned) and
// its checks go to the members that win next; the others keep theirs.
//
// The pool only gossips with the region's key, which the control plane
// derives for the region and hands out with the assignments (kept on
// disk with them): memberlist encrypts and authenticates every message
// with it (AES-GCM), so a process without a valid agent token of the
// region cannot join the pool or take its checks. An agent that has never
// received the key binds its gossip address but neither gossips nor
// answers until SetKey gives it one: it is a region of one meanwhile.
//
// Tokens of different accounts may serve one region: it stays one pool.
// Each member gossips its token's id with its name, and each check names
// the tokens that serve its account (agentv1.Check.tokens): the
// rendezvous hash of a check runs over the live members of those tokens
// only, so a check never lands on an agent that was not handed it.
//
// An agent without a gossip address is a region of one: it owns every
// check.
package region

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// Member is a live agent of the region.
type Member struct {
	// ID is the agent's random id (its memberlist name).
	ID string
	// Name is the agent's --name, and TokenID the id of its agent token
	// (both in its memberlist meta).
	Name, TokenID string
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
	// SecretKey is the region's gossip key (16, 24 or 32 bytes) when it is
	// known at start (from the last assignments on disk): it encrypts and
	// authenticates the gossip (AES-GCM), and only agents with the same
	// key meet. Without it the pool waits for SetKey.
	SecretKey []byte
	// TokenID is the id of the agent's token as the last assignments named
	// it ("" before the first); SetKey updates it.
	TokenID string
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
	nt   *memberlist.NetTransport // nil for a region of one
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once // stops once, by Close or Kill

	// startMu orders SetKey and shutdown; ml and keyring are set once
	// under it (and read under it, or after ml is known to be set).
	startMu  sync.Mutex
	ml       *memberlist.Memberlist
	keyring  *memberlist.Keyring
	drained  chan struct{} // closed to stop draining the transport before memberlist starts
	drainEnd chan struct{} // closed when the draining has stopped
	stopped  bool

	gossiping atomic.Bool // memberlist runs

	mu      sync.RWMutex
	token   string            // this agent's token id, as gossiped
	live    map[string]Member // by ID, from memberlist's events
	members []Member          // the same, sorted by ID
}

// The gossip states of a pool (State).
const (
	// GossipOff: no gossip address, a region of one.
	GossipOff = "off"
	// GossipWaitingForKey: the agent has never received the region's key
	// from the control plane; it does not gossip yet.
	GossipWaitingForKey = "waiting_for_key"
	// GossipOn: gossiping with the region's key.
	GossipOn = "on"
)

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

// New binds the pool's gossip address (when one is given, so that a taken
// port fails at once) and, when the region's key is known, starts
// gossiping and joining (in the background, again and again while the
// agent is alone: the others may start later). Without the key it waits
// for SetKey.
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
	self := Member{ID: o.ID, Name: o.Name, TokenID: o.TokenID}
	p := &Pool{o: o, stop: make(chan struct{}), token: o.TokenID, live: map[string]Member{o.ID: self}, members: []Member{self}}
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
	p.nt = nt
	// Nothing is read from the socket until there is a key: drop what
	// arrives, so the transport never blocks.
	p.startDrain()
	if len(o.SecretKey) > 0 {
		if err := p.SetKey(o.SecretKey, o.TokenID); err != nil {
			p.Kill()
			return nil, err
		}
	}
	return p, nil
}

// Addr returns the gossip address others join ("" for a region of one):
// the bound address, with the port picked for port 0.
func (p *Pool) Addr() string {
	if p.nt == nil {
		return ""
	}
	host, _, _ := net.SplitHostPort(p.o.GossipAddr)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		if a, _, err := p.nt.FinalAdvertiseAddr("", 0); err == nil {
			host = a.String()
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(p.nt.GetAutoBindPort()))
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

// update records a join, update (alive) or leave (gone) of a member.
// Memberlist calls it under its own lock, the only time its Node may be
// read; it takes only the pool's.
func (p *Pool) update(n *memberlist.Node, alive bool) {
	token, name := parseMeta(n.Meta)
	m := Member{ID: n.Name, Name: name, TokenID: token, Addr: n.Address()}
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
	ms := sortedMembers(p.live)
	changed := !slices.Equal(ms, p.members)
	p.members = ms
	p.mu.Unlock()
	if changed && p.o.OnChange != nil {
		p.o.OnChange()
	}
}

// sortedMembers lists live by ID.
func sortedMembers(live map[string]Member) []Member {
	ms := make([]Member, 0, len(live))
	for _, m := range live {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.ID, b.ID) })
	return ms
}

func ids(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// events keeps the member list current.
type events struct{ p *Pool }

func (e *events) NotifyJoin(n *memberlist.Node)   { e.p.update(n, true) }
func (e *events) NotifyUpdate(n *memberlist.Node) { e.p.update(n, true) }
func (e *events) NotifyLeave(n *memberlist.Node)  { e.p.update(n, false) }

// meta is the delegate that gossips the agent's token id and name as its
// meta: "<token id>\n<name>".
type meta struct{ p *Pool }

func (m meta) NodeMeta(limit int) []byte {
	m.p.mu.RLock()
	b := []byte(m.p.token + "\n" + m.p.o.Name)
	m.p.mu.RUnlock()
	if len(b) > limit {
		b = b[:limit]
	}
	return b
}
func (meta) NotifyMsg([]byte)                {}
func (meta) GetBroadcasts(int, int) [][]byte { return nil }
func (meta) LocalState(bool) []byte          { return nil }
func (meta) MergeRemoteState([]byte, bool)   {}

// parseMeta reads a member's meta. A token id never holds a newline.
func parseMeta(b []byte) (token, name string) {
	token, name, ok := strings.Cut(string(b), "\n")
	if !ok {
		return "", string(b)
	}
	return token, name
}
