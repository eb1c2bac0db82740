package cluster

import (
	"context"
	"crypto/sha256"
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

// peerSet is the set of live servers as gossip knows them, by node id.
type peerSet struct {
	mu    sync.Mutex
	alive map[string]nodeMeta
}

func newPeerSet() *peerSet { return &peerSet{alive: map[string]nodeMeta{}} }

func (p *peerSet) set(m nodeMeta) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.alive[m.ID] = m
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

// startGossip starts memberlist on opts.GossipAddr. Gossip is encrypted
// with a key derived from the cluster secret, so only nodes that share it
// can join.
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
	}
	c.Name = n.opts.NodeID
	c.BindAddr = host
	c.BindPort = port
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		c.AdvertiseAddr = host
	}
	c.AdvertisePort = port
	key := sha256.Sum256(append([]byte("lookout gossip v1:"), n.opts.Secret...))
	c.SecretKey = key[:]
	c.Logger = n.log.Named("gossip").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	c.Delegate = &gossipDelegate{n: n}
	c.Events = &gossipEvents{n: n}
	ml, err := memberlist.Create(c)
	if err != nil {
		return fmt.Errorf("start gossip on %s: %w", n.opts.GossipAddr, err)
	}
	n.ml = ml
	return nil
}

// GossipAddr is the address gossip listens on ("" without gossip).
func (n *Node) GossipAddr() string {
	if n.ml == nil {
		return ""
	}
	ln := n.ml.LocalNode()
	return net.JoinHostPort(ln.Addr.String(), strconv.Itoa(int(ln.Port)))
}

// joinLoop meets the --join addresses, retrying until one answers, so
// nodes can be started in any order.
func (n *Node) joinLoop(ctx context.Context) {
	log := n.log.Named("join")
	for wait := 500 * time.Millisecond; ; wait = min(wait*2, 10*time.Second) {
		joined, err := n.ml.Join(n.opts.Join)
		if joined > 0 {
			log.Info("joined gossip", "contacted", joined)
			return
		}
		log.Warn("could not join yet; retrying", "join", n.opts.Join, "error", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
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
	e.n.peers.set(meta)
	e.n.memberChanged()
}
