// Package cluster runs one control-plane node: raft on a raft-wal log store,
// the state machine glue, snapshots, memberlist gossip, bootstrap and join,
// the leader's lifecycle, write forwarding and consistent reads.
//
// Everything above it (the HTTP APIs) talks to a *Node through Apply,
// ConsistentRead and Status, and reads the local state directly.
package cluster

import (
	"context"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/memberlist"
	"github.com/hashicorp/raft"

	"lookout/internal/metrics"
)

// Options configures a Node.
type Options struct {
	// NodeID names the node in raft and gossip; it must stay the same
	// across restarts.
	NodeID string
	// DataDir holds raft/ (log and stable store) and snapshots/; the
	// caller keeps the state's own database beside them (state/).
	DataDir string
	// State is the replicated state the node applies entries to, opened by
	// the caller, who closes it after the node.
	State StateMachine
	// RaftAddr is the address raft listens on.
	RaftAddr string
	// RaftAdvertise is the raft address peers dial (host, or host:port;
	// no port or port 0 means the bound port). Default: the bound address.
	RaftAdvertise string
	// HTTPAddr is the advertised address of this node's HTTP listener,
	// where peers forward writes.
	HTTPAddr string
	// GossipAddr is the memberlist address; empty runs without gossip (a
	// single dev node).
	GossipAddr string
	// GossipAdvertise is the gossip address peers reach (IP or host name,
	// with an optional port as for RaftAdvertise). Default: the bound
	// address.
	GossipAdvertise string
	// Join lists gossip addresses of other nodes to meet.
	Join []string
	// BootstrapExpect is how many servers must meet before one bootstraps
	// the cluster; 1 bootstraps alone; 0 never bootstraps (the node waits
	// to be added by an existing cluster's leader).
	BootstrapExpect int
	// Secret authenticates node-to-node RPC and encrypts gossip, through
	// subkeys derived from it (HKDF). Every node of a cluster must have the
	// same one.
	Secret []byte
	// RemoveGoneAfter is how long a server may be missing from gossip, while
	// the leader's raft heartbeats to it fail, before the leader removes it
	// from the raft configuration (default 72h).
	RemoveGoneAfter time.Duration
	// RejoinInterval is how often a node tries to meet again the members
	// gossip lost (default 30s, as Serf reconnects failed members).
	RejoinInterval time.Duration
	// ReconcileInterval is how often the leader reconciles membership
	// (default 5s).
	ReconcileInterval time.Duration
	// LeaderWait is how long Apply and ConsistentRead wait for a leader
	// before failing with ErrNoLeader (default 5s).
	LeaderWait time.Duration
	// LeaderTasks run while this node is the leader and ready (after its
	// Barrier), each in its own goroutine with a context that ends when
	// leadership does: the leader-only subsystems (the deadline engine,
	// alert dispatch, retention). Each gets the node, to propose what it
	// decides.
	LeaderTasks []func(ctx context.Context, n *Node)
	// Raft overrides raft's timing and snapshot settings; zero fields keep
	// raft's defaults.
	Raft RaftTuning
	// Small trims the raft log store to small segment files (tests, small
	// machines).
	Small bool
	// FastGossip uses memberlist's local-network timings (tests): failures
	// are detected in a few seconds instead of many, and dead members are
	// given up after 2s instead of 15s.
	FastGossip bool
	// WrapGossip, when set, wraps memberlist's network transport (tests
	// pass one that injects faults).
	WrapGossip func(memberlist.NodeAwareTransport) memberlist.NodeAwareTransport
	// Dial opens outgoing connections (raft and RPC); default net.Dialer.
	Dial DialFunc
	// ClientTLS, when set, makes node-to-node RPC (forwarding, ReadIndex,
	// status, restore) use https with it; with a client certificate in it
	// (GetClientCertificate) the peer's RPC handler sees a verified one.
	ClientTLS *tls.Config
	// PeerTLS, when set, is mutual TLS between nodes: the raft stream
	// layer serves with it (it must require and verify client
	// certificates), raft dials with ClientTLS, and the RPC handler refuses
	// requests that did not come with a verified client certificate.
	PeerTLS *tls.Config
	// Version is advertised in gossip metadata.
	Version string
	// Logger is the node's logger; subsystems use named children.
	Logger hclog.Logger
	// Metrics times Apply and counts leader changes (nil: none). Raft's
	// own figures are read with RaftStats.
	Metrics *metrics.Cluster
}

// RaftTuning holds the raft settings tests and operators may change.
type RaftTuning struct {
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	SnapshotThreshold  uint64
	SnapshotInterval   time.Duration
	TrailingLogs       uint64
	// LogSegmentBytes is the raft log's segment file size (0: 64 MiB, 4 MiB
	// with Options.Small). Compaction drops whole segments only: entries
	// in the segment being written stay readable, and are sent to a
	// lagging follower instead of a snapshot. Tests that need the
	// snapshot path use tiny segments.
	LogSegmentBytes int
}

// Node is one control-plane node.
type Node struct {
	opts  Options
	log   hclog.Logger
	state StateMachine
	logs  *walStore
	raft  *raft.Raft
	trans *gatedTransport
	snaps raft.SnapshotStore
	ml    *memberlist.Memberlist
	peers *peerSet
	rpc   *rpcClients
	keys  clusterKeys

	contact  *raftContact  // the leader's heartbeats to each server
	leaders  *leaderWatch  // wakes writes waiting for a leader
	caughtUp atomic.Bool   // applied up to the leader's index seen at start
	raftDone chan struct{} // closed once raft has shut down

	notifyCh  chan bool
	ready     atomic.Bool // leader and Barrier done in this term
	memberCh  chan struct{}
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New opens the node's stores, starts raft, joins gossip and starts the
// background loops (leadership, bootstrap, join and rejoin, catch-up). The
// caller serves Handler on the HTTP listener at opts.HTTPAddr and calls
// Close at the end.
func New(opts Options) (n *Node, err error) {
	if opts.PeerTLS != nil && opts.ClientTLS == nil {
		// The raft listener requires a client certificate, which only
		// ClientTLS presents.
		return nil, errors.New("cluster: Options.PeerTLS needs ClientTLS (with the node's client certificate)")
	}
	opts = withDefaults(opts)
	n = &Node{
		opts:     opts,
		log:      opts.Logger,
		notifyCh: make(chan bool, 16),
		memberCh: make(chan struct{}, 1),
		peers:    newPeerSet(),
		contact:  newRaftContact(),
		leaders:  newLeaderWatch(),
		raftDone: make(chan struct{}),
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	// On an error, close what was started. The node is captured here:
	// "return nil, err" sets the named result n to nil before this runs.
	started := n
	defer func() {
		if err != nil {
			started.Close()
		}
	}()
	if n.keys, err = deriveKeys(opts.Secret); err != nil {
		return nil, err
	}
	n.rpc = newRPCClients(opts.Dial, n.rpcToken(), opts.ClientTLS)

	// Stores: the raft log (synced); the state (made durable by the log) is
	// the caller's.
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	n.logs, err = openLogStore(opts.DataDir, segmentSize(opts.Small, opts.Raft.LogSegmentBytes), n.log.Named("raftlog"))
	if err != nil {
		return nil, err
	}
	if opts.State == nil {
		return nil, errors.New("cluster: Options.State is required")
	}
	n.state = opts.State
	n.snaps, err = raft.NewFileSnapshotStoreWithLogger(filepath.Join(opts.DataDir, "snapshots"), 2, n.log.Named("snapshots"))
	if err != nil {
		return nil, fmt.Errorf("open snapshot store: %w", err)
	}
	// A state that lost unsynced writes in a crash of the machine may be
	// behind the newest snapshot: restore it, since raft will only replay
	// the log after the snapshot (NoSnapshotRestoreOnStart).
	if err := n.catchUpFromSnapshot(); err != nil {
		return nil, err
	}

	// Raft transport on its own listener.
	ln, err := net.Listen("tcp", opts.RaftAddr)
	if err != nil {
		return nil, fmt.Errorf("listen for raft on %s: %w", opts.RaftAddr, err)
	}
	// Its advertised address must be one peers can dial; a node without
	// gossip (dev) has no peers and may keep a wildcard bind address.
	var advertise net.Addr = ln.Addr()
	if opts.RaftAdvertise != "" || opts.GossipAddr != "" {
		if advertise, err = advertiseAddr(opts.RaftAdvertise, ln.Addr()); err != nil {
			ln.Close()
			return nil, fmt.Errorf("raft advertise address: %w", err)
		}
	}
	n.trans = &gatedTransport{NetworkTransport: raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  newStreamLayer(ln, advertise, opts.Dial, opts.PeerTLS, opts.ClientTLS),
		MaxPool: 3,
		Timeout: 10 * time.Second,
		Logger:  n.log.Named("transport"),
	})}

	// Raft itself.
	hasState, err := raft.HasExistingState(n.logs, n.logs, n.snaps)
	if err != nil {
		return nil, fmt.Errorf("inspect raft state: %w", err)
	}
	cache, err := raft.NewLogCache(512, n.logs)
	if err != nil {
		return nil, fmt.Errorf("log cache: %w", err)
	}
	n.raft, err = raft.NewRaft(n.raftConfig(), &fsm{state: n.state}, cache, n.logs, n.snaps, n.trans)
	if err != nil {
		return nil, fmt.Errorf("start raft: %w", err)
	}
	// The leader's heartbeats to each server, as raft observes them.
	n.watchHeartbeats()

	// Gossip, so servers find each other.
	if opts.GossipAddr != "" {
		if err := n.startGossip(); err != nil {
			return nil, err
		}
	}

	// Background loops.
	n.goLoop(n.monitorLeadership)
	if !hasState && opts.BootstrapExpect > 0 {
		n.goLoop(n.bootstrapLoop)
	}
	if n.ml != nil {
		n.goLoop(n.rejoinLoop)
	}
	n.goLoop(n.catchUpLoop)
	return n, nil
}

func withDefaults(o Options) Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Dial == nil {
		var d net.Dialer
		o.Dial = d.DialContext
	}
	if o.RemoveGoneAfter <= 0 {
		o.RemoveGoneAfter = 72 * time.Hour
	}
	if o.RejoinInterval <= 0 {
		o.RejoinInterval = 30 * time.Second
	}
	if o.ReconcileInterval <= 0 {
		o.ReconcileInterval = 5 * time.Second
	}
	if o.PeerTLS != nil && o.ClientTLS == nil {
		o.ClientTLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if o.LeaderWait <= 0 {
		o.LeaderWait = 5 * time.Second
	}
	return o
}

func (n *Node) raftConfig() *raft.Config {
	c := raft.DefaultConfig()
	c.LocalID = raft.ServerID(n.opts.NodeID)
	c.Logger = n.log.Named("raft")
	c.NotifyCh = n.notifyCh
	c.NoSnapshotRestoreOnStart = true
	t := n.opts.Raft
	if t.HeartbeatTimeout > 0 {
		c.HeartbeatTimeout = t.HeartbeatTimeout
	}
	if t.ElectionTimeout > 0 {
		c.ElectionTimeout = t.ElectionTimeout
	}
	if t.LeaderLeaseTimeout > 0 {
		c.LeaderLeaseTimeout = t.LeaderLeaseTimeout
	}
	if t.SnapshotThreshold > 0 {
		c.SnapshotThreshold = t.SnapshotThreshold
	}
	if t.SnapshotInterval > 0 {
		c.SnapshotInterval = t.SnapshotInterval
	}
	if t.TrailingLogs > 0 {
		c.TrailingLogs = t.TrailingLogs
	}
	return c
}

// catchUpFromSnapshot restores the newest snapshot when the state is behind
// it.
func (n *Node) catchUpFromSnapshot() error {
	metas, err := n.snaps.List()
	if err != nil || len(metas) == 0 {
		return err
	}
	_, rc, err := n.snaps.Open(metas[0].ID)
	if err != nil {
		return fmt.Errorf("open snapshot %s: %w", metas[0].ID, err)
	}
	defer rc.Close()
	snapApplied, err := n.state.SnapshotAppliedIndex(rc)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", metas[0].ID, err)
	}
	if n.state.AppliedIndex() >= snapApplied {
		return nil
	}
	n.log.Warn("state is behind the newest snapshot; restoring it", "state_applied", n.state.AppliedIndex(), "snapshot_applied", snapApplied)
	_, rc2, err := n.snaps.Open(metas[0].ID)
	if err != nil {
		return fmt.Errorf("open snapshot %s: %w", metas[0].ID, err)
	}
	defer rc2.Close()
	return n.state.Restore(rc2)
}

// goLoop runs fn until the node closes.
func (n *Node) goLoop(fn func(ctx context.Context)) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		fn(n.ctx)
	}()
}

// StateMachine is the state the node applies entries to (Options.State).
func (n *Node) StateMachine() StateMachine { return n.state }

// ID is the node id.
func (n *Node) ID() string { return n.opts.NodeID }

// RaftAddr is the address raft listens on.
func (n *Node) RaftAddr() string { return string(n.trans.LocalAddr()) }

// RaftStats is raft's own statistics (for diagnosis and tests).
func (n *Node) RaftStats() map[string]string { return n.raft.Stats() }

// IsLeader tells whether this node is the leader and has finished its
// Barrier, so its state holds every committed entry.
func (n *Node) IsLeader() bool { return n.ready.Load() && n.raft.State() == raft.Leader }

// Leader returns the id of the leader this node knows of ("" when none).
func (n *Node) Leader() string {
	_, id := n.raft.LeaderWithID()
	return string(id)
}

// Healthy tells whether the node can accept events now, and if not why:
// it knows a leader, and it has applied everything the leader had applied
// when this node first reached it after starting (so a restarted node
// with a backlog is not healthy until it has caught up).
func (n *Node) Healthy() (bool, string) {
	if n.ctx.Err() != nil {
		return false, "shutting down"
	}
	if n.Leader() == "" {
		return false, "no leader"
	}
	if !n.caughtUp.Load() {
		return false, "catching up"
	}
	return true, ""
}

// rpcToken is the bearer token of node-to-node RPC, a subkey of the secret.
func (n *Node) rpcToken() string {
	return hex.EncodeToString(n.keys.rpc)
}

// Handler returns the path prefix and handler of the node-to-node RPC
// service, to be served on the node's HTTP listener (HTTP/2, cleartext or
// over TLS).
func (n *Node) Handler() (string, http.Handler) {
	return newRPCHandler(n)
}

// Close stops the node without leaving the cluster: its peers see it as
// gone, and it rejoins when started again with the same data.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.cancel()
		var errs []error
		if n.ml != nil {
			errs = append(errs, n.ml.Shutdown())
		}
		if n.raft != nil {
			errs = append(errs, n.raft.Shutdown().Error())
		}
		close(n.raftDone)
		n.wg.Wait()
		if n.trans != nil {
			errs = append(errs, n.trans.Close())
			n.trans.shutHeartbeats() // before the stable store closes
		}
		n.rpc.close()
		if n.logs != nil {
			errs = append(errs, n.logs.Close())
		}
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}
