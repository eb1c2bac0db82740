// Package clustertest runs real control-plane nodes in one test process:
// real raft, real Badger in t.TempDir(), real gossip and node-to-node RPC on
// 127.0.0.1, with a FaultNet between them to cut and heal links.
package clustertest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/cluster"
	"lookout/control/state"
	"lookout/internal/httpserver"
)

// Options change the nodes a test cluster starts.
type Options struct {
	// Tune edits each node's options before it starts.
	Tune func(i int, o *cluster.Options)
	// BindAll binds every listener of every node to 0.0.0.0 and advertises
	// 127.0.0.1, as a node in a container would.
	BindAll bool
	// Serve adds handlers (the APIs under test) to a node's HTTP mux each
	// time the node starts; the function it returns runs when the node is
	// killed, after its HTTP server closed.
	Serve func(n *cluster.Node, mux *http.ServeMux) (stop func())
	// ServerTLS, when set, gives node i's HTTP listener a TLS config: it
	// serves HTTPS (HTTP/1.1 and HTTP/2). Tune sets the node's ClientTLS
	// and PeerTLS to match.
	ServerTLS func(i int) *tls.Config
}

// Cluster is a set of nodes that bootstrap together (BootstrapExpect = n).
type Cluster struct {
	t      testing.TB
	opt    Options
	expect int // BootstrapExpect of every node
	Net    *FaultNet
	Nodes  []*Node
	quiet  atomic.Bool // set once the test is over: logs go nowhere
}

// Node is one member of a test cluster. Node is nil while it is killed.
type Node struct {
	*cluster.Node
	Index int
	opts  cluster.Options
	state *state.Store
	ln    net.Listener
	srv   *httpserver.Server
	stop  func() // from Options.Serve
	tls   bool   // serves HTTPS
}

// State is the node's local copy of the replicated state (nil while the
// node is killed).
func (n *Node) State() *state.Store { return n.state }

// DataDir is the node's data directory, kept across Kill and Restart.
func (n *Node) DataDir() string { return n.opts.DataDir }

// StateOf is the state store of a node started by a test cluster (for
// leader tasks, which get the *cluster.Node).
func StateOf(n *cluster.Node) *state.Store { return n.StateMachine().(*state.Store) }

// httpBind is the address the node's HTTP listener binds.
func (n *Node) httpBind() string { return samePort(n.ln.Addr().String(), n.opts.HTTPAddr) }

// URL is the base URL of the node's HTTP listener.
func (n *Node) URL() string {
	if n.tls {
		return "https://" + n.opts.HTTPAddr
	}
	return "http://" + n.opts.HTTPAddr
}

// NewCluster starts n nodes that meet through gossip and bootstrap one
// raft cluster, and waits for a ready leader. Everything stops with t.
func NewCluster(t testing.TB, n int, o ...Options) *Cluster {
	t.Helper()
	var opt Options
	if len(o) > 0 {
		opt = o[0]
	}
	c := &Cluster{t: t, Net: NewFaultNet(), opt: opt, expect: n}
	for i := 0; i < n; i++ {
		c.add("", false)
	}
	t.Cleanup(c.Close)
	c.Leader(15 * time.Second)
	return c
}

// Add starts one more node called id that meets the others through
// gossip, with the same BootstrapExpect: it must not bootstrap a cluster of
// its own, and the leader adds it as a voter.
func (c *Cluster) Add(id string) *Node {
	c.t.Helper()
	return c.add(id, false)
}

// AddCutOff is Add with the new node's raft port blocked from the start
// (gossip and RPC still work): the leader can add it to the configuration
// but cannot reach it, so it learns of the cluster only through its peers.
// Net.Unblock(n.RaftAddr()) lets raft through.
func (c *Cluster) AddCutOff(id string) *Node {
	c.t.Helper()
	return c.add(id, true)
}

func nodeID(i int, id string) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("node%d", i)
}

// add starts node number len(c.Nodes), joining the first node's gossip.
func (c *Cluster) add(id string, cutOff bool) *Node {
	t := c.t
	i := len(c.Nodes)
	bind := "127.0.0.1"
	if c.opt.BindAll {
		bind = "0.0.0.0"
	}
	raftAddr := bind + ":0"
	if cutOff {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		raftAddr = l.Addr().String()
		l.Close()
		c.Net.Block(raftAddr)
	}
	ln, err := net.Listen("tcp", bind+":0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	httpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	c.Net.Own(httpAddr, i)
	opts := cluster.Options{
		NodeID:            nodeID(i, id),
		DataDir:           t.TempDir(),
		RaftAddr:          raftAddr,
		HTTPAddr:          httpAddr,
		GossipAddr:        bind + ":0",
		BootstrapExpect:   c.expect,
		Secret:            []byte("clustertest secret"),
		ReconcileInterval: 300 * time.Millisecond,
		RejoinInterval:    time.Second,
		Raft: cluster.RaftTuning{
			HeartbeatTimeout:   700 * time.Millisecond,
			ElectionTimeout:    700 * time.Millisecond,
			LeaderLeaseTimeout: 350 * time.Millisecond,
		},
		Small:      true,
		FastGossip: true,
		Dial:       c.Net.Dialer(i),
		WrapGossip: c.Net.GossipTransport(i),
		Version:    "test",
		Logger:     hclog.New(&hclog.LoggerOptions{Name: fmt.Sprintf("node%d", i), Level: hclog.Warn, Output: testWriter{t: t, quiet: &c.quiet}}),
	}
	if c.opt.BindAll {
		opts.RaftAdvertise, opts.GossipAdvertise = "127.0.0.1", "127.0.0.1"
	}
	if i > 0 {
		opts.Join = []string{c.Nodes[0].opts.GossipAddr}
	}
	if c.opt.Tune != nil {
		c.opt.Tune(i, &opts)
	}
	node := &Node{Index: i, opts: opts, ln: ln}
	c.Nodes = append(c.Nodes, node)
	c.start(node)
	return node
}

// start opens a node on its listener and records its addresses, so a
// restart binds the same ones.
func (c *Cluster) start(n *Node) {
	c.t.Helper()
	st, err := state.Open(state.Options{Dir: filepath.Join(n.opts.DataDir, "state"), Small: true, Logger: n.opts.Logger.Named("state")})
	if err != nil {
		c.t.Fatalf("open state of node %d: %v", n.Index, err)
	}
	n.opts.State = st
	node, err := cluster.New(n.opts)
	if err != nil {
		st.Close()
		c.t.Fatalf("start node %d: %v", n.Index, err)
	}
	n.Node, n.state = node, st
	// A restart binds the same ports on the same bind addresses.
	n.opts.RaftAddr = samePort(n.opts.RaftAddr, node.RaftAddr())
	n.opts.GossipAddr = samePort(n.opts.GossipAddr, node.GossipAddr())
	c.Net.Own(node.RaftAddr(), n.Index)
	c.Net.Own(node.GossipAddr(), n.Index)
	mux := http.NewServeMux()
	path, h := node.Handler()
	mux.Handle(path, h)
	n.stop = func() {}
	if c.opt.Serve != nil {
		n.stop = c.opt.Serve(node, mux)
	}
	// The node's real HTTP server (cap, timeouts, h2c or TLS).
	so := httpserver.Options{RPCPrefixes: []string{path}}
	if c.opt.ServerTLS != nil {
		n.tls = true
		so.TLS = c.opt.ServerTLS(n.Index)
	}
	n.srv = httpserver.New(mux, so)
	go n.srv.Serve(n.ln)
}

// Kill stops node i abruptly (no leave): peers see it as gone.
func (c *Cluster) Kill(i int) {
	c.t.Helper()
	n := c.Nodes[i]
	if n.Node == nil {
		return
	}
	n.srv.Close()
	n.stop()
	if err := n.Node.Close(); err != nil {
		c.t.Logf("close node %d: %v", i, err)
	}
	if err := n.state.Close(); err != nil {
		c.t.Logf("close state of node %d: %v", i, err)
	}
	n.Node, n.state = nil, nil
}

// Restart starts killed node i again from its data, on its old addresses.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	n := c.Nodes[i]
	if n.Node != nil {
		c.t.Fatalf("node %d is running", i)
	}
	ln, err := listenRetry(n.httpBind())
	if err != nil {
		c.t.Fatalf("restart node %d: %v", i, err)
	}
	n.ln = ln
	n.opts.Join = nil
	for _, o := range c.Nodes {
		if o != n {
			n.opts.Join = append(n.opts.Join, o.opts.GossipAddr)
		}
	}
	c.start(n)
}

// samePort is bind with the port of advertised (a node advertises the
// port it bound).
func samePort(bind, advertised string) string {
	host, _, _ := net.SplitHostPort(bind)
	_, port, _ := net.SplitHostPort(advertised)
	return net.JoinHostPort(host, port)
}

func listenRetry(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, err
}

// Close stops every node.
func (c *Cluster) Close() {
	for i := range c.Nodes {
		c.Kill(i)
	}
	c.quiet.Store(true)
}

// Running returns the nodes that are not killed.
func (c *Cluster) Running() []*Node {
	var out []*Node
	for _, n := range c.Nodes {
		if n.Node != nil {
			out = append(out, n)
		}
	}
	return out
}

// Leader waits up to timeout for a ready leader among the running nodes
// and returns it; it fails the test otherwise.
func (c *Cluster) Leader(timeout time.Duration) *Node {
	c.t.Helper()
	n, err := c.WaitLeader(timeout, c.Running()...)
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// WaitLeader waits up to timeout for one of among to be a ready leader.
func (c *Cluster) WaitLeader(timeout time.Duration, among ...*Node) (*Node, error) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, n := range among {
			if n.Node != nil && n.IsLeader() {
				return n, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, errors.New("no ready leader in time")
}

// Follower returns a running node that is not the leader.
func (c *Cluster) Follower() *Node {
	c.t.Helper()
	leader := c.Leader(10 * time.Second)
	for _, n := range c.Running() {
		if n != leader {
			return n
		}
	}
	c.t.Fatal("no follower running")
	return nil
}

// WaitConverged waits until every running node has applied the same index
// as the leader.
func (c *Cluster) WaitConverged(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		leader := c.Leader(timeout)
		want := leader.State().AppliedIndex()
		same := true
		for _, n := range c.Running() {
			if n.State().AppliedIndex() != want {
				same = false
			}
		}
		if same {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("nodes did not converge on index %d", want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Context is a context that ends with the test or after d.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// testWriter sends logs to t.Log so they show with the failing test.
type testWriter struct {
	t     testing.TB
	quiet *atomic.Bool
}

func (w testWriter) Write(p []byte) (int, error) {
	if !w.quiet.Load() {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
