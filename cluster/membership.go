package cluster

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
)

// nodeMeta is what a node tells its peers about itself through gossip.
type nodeMeta struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft"`
	HTTPAddr string `json:"http"`
	Version  string `json:"v"`
	Expect   int    `json:"expect"`
}

// peerSet is the set of live servers as gossip knows them, by node id, and
// the last metadata and gossip address gossip gave for every server it
// ever saw. The last-known entries are never dropped when a member fails:
// forwarding uses them to reach a leader that gossip lost (raft names the
// leader; gossip may not have healed yet), and the rejoin loop uses their
// gossip addresses to meet lost members again.
type peerSet struct {
	mu    sync.Mutex
	alive map[string]nodeMeta
	known map[string]knownPeer
}

// knownPeer is what gossip last said about a server.
type knownPeer struct {
	meta   nodeMeta
	gossip string // memberlist address, host:port
}

func newPeerSet() *peerSet {
	return &peerSet{alive: map[string]nodeMeta{}, known: map[string]knownPeer{}}
}

func (p *peerSet) set(m nodeMeta, gossipAddr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.alive[m.ID] = m
	p.known[m.ID] = knownPeer{meta: m, gossip: gossipAddr}
}

func (p *peerSet) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.alive, id)
}

func (p *peerSet) get(id string) (nodeMeta, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.alive[id]
	return m, ok
}

// lastKnown returns the metadata of id: live, or else the last gossip gave.
func (p *peerSet) lastKnown(id string) (nodeMeta, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m, ok := p.alive[id]; ok {
		return m, true
	}
	k, ok := p.known[id]
	return k.meta, ok
}

// lost returns the last gossip addresses of servers in ids that are not
// live, and whether any server of ids is neither live nor known.
func (p *peerSet) lost(ids []string) (addrs []string, unknown bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if _, ok := p.alive[id]; ok {
			continue
		}
		if k, ok := p.known[id]; ok && k.gossip != "" {
			addrs = append(addrs, k.gossip)
		} else {
			unknown = true
		}
	}
	return addrs, unknown
}

// knownIDs returns the ids of every server gossip ever saw.
func (p *peerSet) knownIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.known))
	for id := range p.known {
		out = append(out, id)
	}
	return out
}

// list returns the live servers sorted by id.
func (p *peerSet) list() []nodeMeta {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]nodeMeta, 0, len(p.alive))
	for _, m := range p.alive {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b nodeMeta) int { return cmpString(a.ID, b.ID) })
	return out
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// self is this node's metadata.
func (n *Node) self() nodeMeta {
	return nodeMeta{ID: n.opts.NodeID, RaftAddr: n.RaftAddr(), HTTPAddr: n.opts.HTTPAddr, Version: n.opts.Version, Expect: n.opts.BootstrapExpect}
}

// startGossip starts memberlist on opts.GossipAddr, advertising
// opts.GossipAdvertise when given. Gossip is encrypted with a subkey of the
// cluster secret, so only nodes that share it can join.
func (n *Node) startGossip() error {
	host, portStr, err := net.SplitHostPort(n.opts.GossipAddr)
	if err != nil {
		return fmt.Errorf("gossip address %q: %w", n.opts.GossipAddr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return fmt.Errorf("gossip address %q: bad port", n.opts.GossipAddr)
	}
	c := memberlist.DefaultLANConfig()
	if n.opts.FastGossip {
		c = memberlist.DefaultLocalConfig()
		c.GossipToTheDeadTime = 2 * time.Second
		c.SuspicionMaxTimeoutMult = 2
	}
	c.Name = n.opts.NodeID
	logger := n.log.Named("gossip").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	if host == "" {
		host = "0.0.0.0"
	}
	nt, err := memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{host}, BindPort: port, Logger: logger})
	if err != nil {
		return fmt.Errorf("start gossip on %s: %w", n.opts.GossipAddr, err)
	}
	c.BindAddr, c.BindPort = host, nt.GetAutoBindPort()
	adv, err := advertiseAddr(n.opts.GossipAdvertise, &net.TCPAddr{IP: net.ParseIP(host), Port: c.BindPort})
	if err != nil {
		nt.Shutdown()
		return fmt.Errorf("gossip advertise address: %w", err)
	}
	advHost, advPort, _ := net.SplitHostPort(adv.String())
	if c.AdvertiseAddr, err = resolveIP(advHost); err != nil {
		nt.Shutdown()
		return fmt.Errorf("gossip advertise address: %w", err)
	}
	c.AdvertisePort, _ = strconv.Atoi(advPort)
	c.Transport = nt
	if n.opts.WrapGossip != nil {
		c.Transport = n.opts.WrapGossip(nt)
	}
	c.SecretKey = n.keys.gossip
	c.Logger = logger
	c.Delegate = &gossipDelegate{n: n}
	c.Events = &gossipEvents{n: n}
	ml, err := memberlist.Create(c)
	if err != nil {
		nt.Shutdown()
		return fmt.Errorf("start gossip on %s: %w", n.opts.GossipAddr, err)
	}
	n.ml = ml
	return nil
}

// resolveIP returns host as an IP, looking a host name up (memberlist
// advertises IPs only).
func resolveIP(host string) (string, error) {
	if net.ParseIP(host) != nil {
		return host, nil
	}
	a, err := net.ResolveIPAddr("ip", host)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", host, err)
	}
	return a.IP.String(), nil
}

// GossipAddr is the address gossip advertises ("" without gossip).
func (n *Node) GossipAddr() string {
	if n.ml == nil {
		return ""
	}
	ln := n.ml.LocalNode()
	return net.JoinHostPort(ln.Addr.String(), strconv.Itoa(int(ln.Port)))
}

// GossipMembers returns the ids of the servers gossip sees alive, this
// node included, sorted (for diagnosis and tests).
func (n *Node) GossipMembers() []string {
	if n.ml == nil {
		return nil
	}
	var out []string
	for _, m := range n.ml.Members() {
		out = append(out, m.Name)
	}
	slices.Sort(out)
	return out
}

// memberChanged wakes the bootstrap and reconcile loops.
func (n *Node) memberChanged() {
	select {
	case n.memberCh <- struct{}{}:
	default:
	}
}

type gossipDelegate struct{ n *Node }

func (d *gossipDelegate) NodeMeta(limit int) []byte {
	b, _ := json.Marshal(d.n.self())
	if len(b) > limit {
		d.n.log.Error("gossip metadata too large", "size", len(b), "limit", limit)
		return nil
	}
	return b
}
func (d *gossipDelegate) NotifyMsg([]byte)                           {}
func (d *gossipDelegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (d *gossipDelegate) LocalState(join bool) []byte                { return nil }
func (d *gossipDelegate) MergeRemoteState(buf []byte, join bool)     {}

type gossipEvents struct{ n *Node }

func (e *gossipEvents) NotifyJoin(m *memberlist.Node)   { e.update(m) }
func (e *gossipEvents) NotifyUpdate(m *memberlist.Node) { e.update(m) }
func (e *gossipEvents) NotifyLeave(m *memberlist.Node) {
	e.n.peers.remove(m.Name)
	e.n.log.Info("server gone from gossip", "node", m.Name)
	e.n.memberChanged()
}

func (e *gossipEvents) update(m *memberlist.Node) {
	var meta nodeMeta
	if err := json.Unmarshal(m.Meta, &meta); err != nil || meta.ID == "" || meta.ID != m.Name {
		e.n.log.Warn("ignoring gossip member without valid metadata", "node", m.Name)
		return
	}
	e.n.peers.set(meta, m.Address())
	e.n.memberChanged()
}
