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
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
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
		return p, nil
	}
	return p, nil
}

// SetKey gives the pool the region's gossip key and this agent's token
// id, as the control plane's stream names them. The first key starts the
// gossip (and the joins); a new key becomes the one the pool sends with,
// the previous one still opening what others send until they have the new
// one too (the cluster secret was changed). A new token id is gossiped to
// the others. A region of one only records the token id.
func (p *Pool) SetKey(key []byte, tokenID string) error {
	if len(key) == 0 {
		return errors.New("region: the gossip key is empty")
	}
	p.startMu.Lock()
	defer p.startMu.Unlock()
	if p.stopped {
		return nil
	}
	tokenChanged := p.setToken(tokenID)
	if p.nt == nil {
		return nil
	}
	if p.ml == nil {
		return p.start(key)
	}
	if !bytes.Equal(p.keyring.GetPrimaryKey(), key) {
		if err := p.rotate(key); err != nil {
			return err
		}
		p.o.Logger.Info("the region's gossip key changed; gossiping with the new one")
	}
	if tokenChanged {
		if err := p.ml.UpdateNode(2 * time.Second); err != nil {
			p.o.Logger.Warn("telling the region of this agent's new token", "error", err)
		}
	}
	return nil
}

// State returns GossipOff, GossipWaitingForKey or GossipOn.
func (p *Pool) State() string {
	switch {
	case p.nt == nil:
		return GossipOff
	case !p.gossiping.Load():
		return GossipWaitingForKey
	}
	return GossipOn
}

// setToken records this agent's token id; it reports whether it changed
// (startMu held).
func (p *Pool) setToken(tokenID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if tokenID == "" || tokenID == p.token {
		return false
	}
	p.token = tokenID
	self := p.live[p.o.ID]
	self.TokenID = tokenID
	p.live[p.o.ID] = self
	p.members = sortedMembers(p.live)
	return true
}

// start stops the draining and starts memberlist with key (startMu held).
func (p *Pool) start(key []byte) error {
	keyring, err := memberlist.NewKeyring(nil, key)
	if err != nil {
		return fmt.Errorf("region: the gossip key: %w", err)
	}
	p.stopDrain()
	host, _, _ := net.SplitHostPort(p.o.GossipAddr)
	c := Tuned()
	c.Name = p.o.ID
	c.BindAddr, c.BindPort = host, p.nt.GetAutoBindPort()
	if c.BindAddr == "" {
		c.BindAddr = "0.0.0.0"
	}
	c.AdvertisePort = c.BindPort
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		c.AdvertiseAddr = host
	}
	c.Transport = p.nt
	c.Keyring = keyring
	c.Logger = p.o.Logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	c.Delegate = meta{p}
	c.Events = &events{p: p}
	if p.o.Config != nil {
		p.o.Config(c)
	}
	ml, err := memberlist.Create(c)
	if err != nil {
		p.startDrain()
		return fmt.Errorf("gossip on %s: %w", p.o.GossipAddr, err)
	}
	p.ml, p.keyring = ml, keyring
	p.gossiping.Store(true)
	p.o.Logger.Info("gossiping with the region's key", "addr", p.Addr())
	if len(p.o.Join) > 0 {
		// Joining may wait on addresses that do not answer: not here.
		p.wg.Go(func() {
			p.join()
			p.rejoin()
		})
	}
	return nil
}

// rotate makes key the one the pool sends with, keeping only the previous
// one beside it (startMu held).
func (p *Pool) rotate(key []byte) error {
	prev := p.keyring.GetPrimaryKey()
	if err := p.keyring.AddKey(key); err != nil {
		return fmt.Errorf("region: the gossip key: %w", err)
	}
	if err := p.keyring.UseKey(key); err != nil {
		return fmt.Errorf("region: the gossip key: %w", err)
	}
	for _, k := range p.keyring.GetKeys() {
		if !bytes.Equal(k, key) && !bytes.Equal(k, prev) {
			if err := p.keyring.RemoveKey(k); err != nil {
				return fmt.Errorf("region: drop an old gossip key: %w", err)
			}
		}
	}
	return nil
}

// startDrain drops what reaches the gossip address until stopDrain
// (startMu held, or before the pool is shared).
func (p *Pool) startDrain() {
	stop, end := make(chan struct{}), make(chan struct{})
	p.drained, p.drainEnd = stop, end
	go func() {
		defer close(end)
		for {
			select {
			case <-stop:
				return
			case <-p.nt.PacketCh():
			case conn := <-p.nt.StreamCh():
				conn.Close()
			}
		}
	}()
}

// stopDrain stops the draining and waits for it (startMu held).
func (p *Pool) stopDrain() {
	close(p.drained)
	<-p.drainEnd
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

// Owner returns the id of the live member that runs check checkID,
// among the members of tokens (empty: every member).
func (p *Pool) Owner(checkID string, tokens []string) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return Owner(checkID, tokens, p.members)
}

// Owns reports whether this agent runs check checkID, served by tokens.
func (p *Pool) Owns(checkID string, tokens []string) bool {
	return p.Owner(checkID, tokens) == p.o.ID
}

// Owner returns the id of the member of members that wins the rendezvous
// hash of checkID among those whose TokenID is in tokens (every member
// when tokens is empty: assignments kept from before checks named their
// tokens), "" when there is none.
func Owner(checkID string, tokens []string, members []Member) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		if len(tokens) > 0 && !slices.Contains(tokens, m.TokenID) {
			continue
		}
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
	if p.nt == nil {
		return nil
	}
	var err error
	p.once.Do(func() {
		p.startMu.Lock()
		defer p.startMu.Unlock()
		p.stopped = true
		close(p.stop)
		p.wg.Wait()
		if p.ml == nil {
			p.stopDrain()
			err = p.nt.Shutdown()
			return
		}
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
