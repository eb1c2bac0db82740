package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"lookout/internal/client"
	"lookout/internal/freeport"
)

// adminToken is the operator token (and cluster secret) of the run.
const adminToken = "chaos-admin-token-0123456789"

// node is one lookout control process and the two proxies in front of
// its raft and HTTP (node RPC) ports, which it advertises to its peers.
// Clients of the APIs talk to its real HTTP port: a partition cuts the
// nodes from each other, not the node from its clients.
type node struct {
	id                 string
	http, raft, gossip string // real listeners
	raftProxy          *Proxy
	httpProxy          *Proxy
	args               []string
	logPath            string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// cluster is the three nodes of a run, their fault layer and their logs.
type cluster struct {
	binary string
	dir    string
	net    *Net
	nodes  []*node
	httpc  *http.Client
}

// startCluster starts n nodes that bootstrap together, each behind its
// proxies, and waits until they are healthy.
func startCluster(ctx context.Context, binary, dir, logLevel string, n int) (*cluster, error) {
	c := &cluster{binary: binary, dir: dir, net: NewNet(), httpc: &http.Client{Timeout: 3 * time.Second}}
	for i := 0; i < n; i++ {
		nd := &node{id: fmt.Sprintf("n%d", i+1), http: freeport.MustAddr(), raft: freeport.MustAddr(), gossip: freeport.MustAddr()}
		var err error
		if nd.raftProxy, err = NewProxy(c.net, nd.id, nd.raft, c.owner); err != nil {
			return nil, err
		}
		if nd.httpProxy, err = NewProxy(c.net, nd.id, nd.http, c.owner); err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, nd)
	}
	for _, nd := range c.nodes {
		var join []string
		for _, o := range c.nodes {
			if o != nd {
				join = append(join, o.gossip)
			}
		}
		nd.logPath = filepath.Join(dir, nd.id+".log")
		nd.args = []string{"control", "--node-id", nd.id, "--data-dir", filepath.Join(dir, nd.id),
			"--http-addr", nd.http, "--raft-addr", nd.raft, "--gossip-addr", nd.gossip,
			"--advertise-raft", nd.raftProxy.Addr(), "--advertise-http", nd.httpProxy.Addr(),
			"--bootstrap-expect", fmt.Sprint(n), "--join", strings.Join(join, ","),
			"--admin-token", adminToken, "--log-level", logLevel}
		if err := nd.start(binary); err != nil {
			c.stop()
			return nil, err
		}
	}
	if _, err := c.waitHealthy(ctx, 90*time.Second); err != nil {
		c.stop()
		return nil, fmt.Errorf("%w\n%s", err, c.logTails(40))
	}
	return c, nil
}

// start runs the node's process, its output appended to its log.
func (n *node) start(binary string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(binary, n.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the suite
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", n.id, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	n.cmd, n.done = cmd, done
	return nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (n *node) kill() {
	n.signal(syscall.SIGKILL)
}

// pause stops the process (SIGSTOP) without it noticing; resume
// continues it (SIGCONT).
func (n *node) pause()  { n.send(syscall.SIGSTOP) }
func (n *node) resume() { n.send(syscall.SIGCONT) }

func (n *node) send(sig os.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil && n.cmd.Process != nil {
		n.cmd.Process.Signal(sig)
	}
}

func (n *node) signal(sig os.Signal) {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// running tells whether the process is up.
func (n *node) running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// owner names the node whose process dialed c (see socketOwner).
func (c *cluster) owner(conn net.Conn) (string, error) {
	pids := map[int]string{}
	for _, n := range c.nodes {
		n.mu.Lock()
		if n.cmd != nil && n.cmd.Process != nil {
			pids[n.cmd.Process.Pid] = n.id
		}
		n.mu.Unlock()
	}
	return socketOwner(conn, pids)
}

// ids is the node ids.
func (c *cluster) ids() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, n.id)
	}
	return out
}

// urls is the base URL of each node's real HTTP listener.
func (c *cluster) urls() []string {
	var out []string
	for _, n := range c.nodes {
		out = append(out, "http://"+n.http)
	}
	return out
}

// leader is the node a majority of the nodes names as leader.
func (c *cluster) leader(ctx context.Context) (*node, error) {
	votes := map[string]int{}
	for _, n := range c.nodes {
		if !n.running() {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		st, err := client.NewAdmin("http://"+n.http, adminToken, c.httpc).ClusterStatus(cctx)
		cancel()
		if err == nil && st.Leader != "" {
			votes[st.Leader]++
		}
	}
	for id, v := range votes {
		if v*2 > len(c.nodes) {
			return c.byID(id), nil
		}
	}
	return nil, fmt.Errorf("no leader named by a majority (votes %v)", votes)
}

func (c *cluster) byID(id string) *node {
	for _, n := range c.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// waitHealthy waits until every node runs, answers /health with 200 and
// a majority agrees on a leader; it returns how long that took.
func (c *cluster) waitHealthy(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = c.healthy(ctx); last == nil {
			if _, last = c.leader(ctx); last == nil {
				return time.Since(start), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("cluster not healthy after %s: %w", timeout, last)
}

// healthy is nil when every node runs and answers /health with 200;
// otherwise it names every node that does not, with the reason /health
// gives, so a cluster that never forms says which node held it back.
func (c *cluster) healthy(ctx context.Context) error {
	var bad []string
	for _, n := range c.nodes {
		if !n.running() {
			bad = append(bad, n.id+" is not running")
			continue
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.http+"/health", nil)
		resp, err := c.httpc.Do(req)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", n.id, err))
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			bad = append(bad, fmt.Sprintf("%s: /health answered %d %s", n.id, resp.StatusCode, bytes.TrimSpace(body)))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	return nil
}

// stop interrupts every node, then closes the proxies.
func (c *cluster) stop() {
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		n.resume() // a node paused when the run was interrupted
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.signal(os.Interrupt)
		}()
	}
	wg.Wait()
	for _, n := range c.nodes {
		if n.raftProxy != nil {
			n.raftProxy.Close()
		}
		if n.httpProxy != nil {
			n.httpProxy.Close()
		}
	}
	c.net.CloseAll()
}

// logTails is the last lines of every node's log, for a report of why
// the cluster did not form.
func (c *cluster) logTails(lines int) string {
	var b strings.Builder
	for _, n := range c.nodes {
		data, err := os.ReadFile(n.logPath)
		if err != nil {
			fmt.Fprintf(&b, "--- %s: %v\n", n.logPath, err)
			continue
		}
		if len(bytes.TrimSpace(data)) == 0 {
			fmt.Fprintf(&b, "--- %s is empty\n", n.logPath)
			continue
		}
		all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		fmt.Fprintf(&b, "--- last %d lines of %s\n%s\n", min(lines, len(all)), n.logPath, strings.Join(all[max(0, len(all)-lines):], "\n"))
	}
	return b.String()
}
