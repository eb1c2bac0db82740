// Package bench is shared by the benchmark programs: it starts lookout
// control processes on loopback (bench/ingest, bench/manage, bench/checks,
// bench/scale, bench/burst): a dev node or a cluster, with accounts made
// through the operator API, and nodes stopped and started again one at a
// time; and it applies commands straight to a state store for the leader
// tasks measured in one process (Direct: bench/engine, bench/checks).
package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"lookout/internal/client"
	"lookout/internal/freeport"
)

const adminToken = "bench-admin-token"

// AdminToken is the operator token of the processes StartCluster starts.
const AdminToken = adminToken

// ClusterOptions says what processes StartClusterWith starts.
type ClusterOptions struct {
	// Binary is the lookout binary.
	Binary string
	// Nodes is how many: 1 is a dev node, more a cluster that bootstraps
	// itself.
	Nodes int
	// Env is added to the processes' environment (e.g. GODEBUG=gctrace=1).
	Env []string
	// Args are added to every node's command line.
	Args []string
}

// Cluster is a set of lookout control processes on loopback.
type Cluster struct {
	dir   string
	env   []string
	args  [][]string
	procs []*exec.Cmd // nil: the node is stopped
	// URLs are host:port of each node's HTTP listener.
	URLs []string
}

// StartCluster starts n lookout control processes (n = 1: a dev node) and
// waits for a leader.
func StartCluster(ctx context.Context, binary string, n int) (*Cluster, error) {
	return StartClusterWith(ctx, ClusterOptions{Binary: binary, Nodes: n})
}

// StartClusterEnv is StartCluster with env added to the processes'
// environment (e.g. GODEBUG=gctrace=1).
func StartClusterEnv(ctx context.Context, binary string, n int, env []string) (*Cluster, error) {
	return StartClusterWith(ctx, ClusterOptions{Binary: binary, Nodes: n, Env: env})
}

// StartClusterWith starts the processes o describes, each with its data
// directory under one temporary directory, and waits for a leader.
func StartClusterWith(ctx context.Context, o ClusterOptions) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "benchcluster")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, env: o.Env}
	type addrs struct{ http, raft, gossip string }
	var as []addrs
	for i := 0; i < o.Nodes; i++ {
		as = append(as, addrs{FreeAddr(), FreeAddr(), FreeAddr()})
	}
	for i, a := range as {
		args := []string{o.Binary, "control", "--data-dir", c.DataDir(i), "--http-addr", a.http, "--raft-addr", a.raft,
			"--admin-token", adminToken, "--log-level", "warn",
			// The benchmarks' check targets and receivers are on loopback.
			"--allow-private-targets"}
		if o.Nodes == 1 {
			args = append(args, "--dev")
		} else {
			var join []string
			for j, other := range as {
				if j != i {
					join = append(join, other.gossip)
				}
			}
			args = append(args, "--node-id", NodeID(i), "--gossip-addr", a.gossip,
				"--bootstrap-expect", fmt.Sprint(o.Nodes), "--join", strings.Join(join, ","))
		}
		c.args = append(c.args, append(args, o.Args...))
		c.procs = append(c.procs, nil)
		c.URLs = append(c.URLs, a.http)
		if err := c.StartNode(ctx, i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := c.waitLeader(ctx, 60*time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// NodeID is the --node-id of node i of a cluster.
func NodeID(i int) string { return fmt.Sprintf("n%d", i+1) }

// DataDir is node i's data directory.
func (c *Cluster) DataDir(i int) string { return filepath.Join(c.dir, fmt.Sprint(i)) }

// StartNode starts node i (stopped, or not started yet) with its command
// line; its output is appended to its log file.
func (c *Cluster) StartNode(ctx context.Context, i int) error {
	if c.procs[i] != nil {
		return fmt.Errorf("node %d is running", i)
	}
	a := c.args[i]
	cmd := exec.CommandContext(ctx, a[0], a[1:]...)
	logf, err := os.OpenFile(c.LogFile(i), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = logf, logf
	if c.env != nil {
		cmd.Env = append(os.Environ(), c.env...)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", a[0], err)
	}
	c.procs[i] = cmd
	return nil
}

// StopNode stops node i with SIGTERM and waits for it to exit.
func (c *Cluster) StopNode(i int) error {
	p := c.procs[i]
	if p == nil {
		return nil
	}
	c.procs[i] = nil
	p.Process.Signal(syscall.SIGTERM)
	err := p.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("node %d exited with %v (log %s)", i, err, c.LogFile(i))
	}
	return err
}

// WaitHealthy waits until node i's GET /health answers 200, and returns
// when that was.
func (c *Cluster) WaitHealthy(ctx context.Context, i int, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		resp, err := hc.Get("http://" + c.URLs[i] + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Now(), nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return time.Time{}, fmt.Errorf("node %d not healthy after %s (log %s)", i, timeout, c.LogFile(i))
}

// Leader is the index of the node the running nodes follow, as the first
// running node knows it.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	for i := range c.procs {
		if c.procs[i] == nil {
			continue
		}
		st, err := c.Admin(i).ClusterStatus(ctx)
		if err != nil {
			return -1, err
		}
		if len(c.procs) == 1 && st.Leader != "" {
			return 0, nil
		}
		for j := range c.procs {
			if st.Leader == NodeID(j) {
				return j, nil
			}
		}
		return -1, fmt.Errorf("leader %q is none of the nodes", st.Leader)
	}
	return -1, errors.New("no node running")
}

// Pid is the process id of node i.
func (c *Cluster) Pid(i int) int { return c.procs[i].Process.Pid }

// LogFile is the file that holds node i's stdout and stderr.
func (c *Cluster) LogFile(i int) string { return filepath.Join(c.dir, fmt.Sprintf("node%d.log", i)) }

// Admin is an operator client of node i.
func (c *Cluster) Admin(i int) *client.Admin {
	return client.NewAdmin("http://"+c.URLs[i], adminToken, nil)
}

func (c *Cluster) waitLeader(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		st, err := c.Admin(0).ClusterStatus(ctx)
		if err == nil && st.Leader != "" {
			resp, err := http.Get("http://" + c.URLs[0] + "/health")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("no leader after %s (logs in %s)", timeout, c.dir)
}

// CopyLogs copies each node's log file into dir (node<i>.log).
func (c *Cluster) CopyLogs(dir string) error {
	for i := range c.procs {
		b, err := os.ReadFile(c.LogFile(i))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(c.LogFile(i))), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Stop stops the processes and removes their data.
func (c *Cluster) Stop() {
	for _, p := range c.procs {
		if p != nil {
			p.Process.Signal(os.Interrupt)
		}
	}
	for i, p := range c.procs {
		if p != nil {
			p.Wait()
			c.procs[i] = nil
		}
	}
	os.RemoveAll(c.dir)
}

// FreeAddr is a loopback address whose port was free for TCP and UDP,
// drawn below the ephemeral range so no outgoing connection takes it
// before the node binds it.
func FreeAddr() string { return freeport.MustAddr() }
