// Package bench is shared by the benchmark programs: it starts lookout
// control processes on loopback (bench/ingest, bench/manage, bench/checks):
// a dev node or a 3-node cluster, with accounts made through the operator
// API; and it applies commands straight to a state store for the leader
// tasks measured in one process (Direct: bench/engine, bench/checks).
package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"lookout/internal/client"
)

const adminToken = "bench-admin-token"

// AdminToken is the operator token of the processes StartCluster starts.
const AdminToken = adminToken

// Cluster is a set of lookout control processes on loopback.
type Cluster struct {
	dir   string
	procs []*exec.Cmd
	// URLs are host:port of each node's HTTP listener.
	URLs []string
}

// StartCluster starts n lookout control processes (n = 1: a dev node) and
// waits for a leader.
func StartCluster(ctx context.Context, binary string, n int) (*Cluster, error) {
	return StartClusterEnv(ctx, binary, n, nil)
}

// StartClusterEnv is StartCluster with env added to the processes'
// environment (e.g. GODEBUG=gctrace=1).
func StartClusterEnv(ctx context.Context, binary string, n int, env []string) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "benchingest")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	type addrs struct{ http, raft, gossip string }
	var as []addrs
	for i := 0; i < n; i++ {
		as = append(as, addrs{FreeAddr(), FreeAddr(), FreeAddr()})
	}
	for i, a := range as {
		args := []string{"control", "--data-dir", filepath.Join(dir, fmt.Sprint(i)), "--http-addr", a.http, "--raft-addr", a.raft,
			"--admin-token", adminToken, "--log-level", "warn",
			// The benchmarks' check targets and receivers are on loopback.
			"--allow-private-targets"}
		if n == 1 {
			args = append(args, "--dev")
		} else {
			var join []string
			for j, o := range as {
				if j != i {
					join = append(join, o.gossip)
				}
			}
			args = append(args, "--node-id", fmt.Sprintf("n%d", i+1), "--gossip-addr", a.gossip,
				"--bootstrap-expect", fmt.Sprint(n), "--join", strings.Join(join, ","))
		}
		cmd := exec.CommandContext(ctx, binary, args...)
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("node%d.log", i)))
		if err != nil {
			c.Stop()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if env != nil {
			cmd.Env = append(os.Environ(), env...)
		}
		if err := cmd.Start(); err != nil {
			c.Stop()
			return nil, fmt.Errorf("start %s: %w", binary, err)
		}
		c.procs = append(c.procs, cmd)
		c.URLs = append(c.URLs, a.http)
	}
	if err := c.waitLeader(ctx, 60*time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
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

// MakeAccounts creates n accounts whose plans allow any ingest rate and
// the most monitor creations a minute, and returns them (with their keys).
func (c *Cluster) MakeAccounts(ctx context.Context, n int) ([]*client.CreatedAccount, error) {
	rate, burst, creations := 1e6, int64(1e6), int64(100_000)
	var accts []*client.CreatedAccount
	for i := 0; i < n; i++ {
		acct, err := c.Admin(i%len(c.URLs)).CreateAccount(ctx, client.CreateAccountRequest{
			Email: fmt.Sprintf("bench%d@example.com", i),
			Plan:  &client.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst, MonitorsCreatedPerMinute: &creations},
		})
		if err != nil {
			return nil, fmt.Errorf("create account: %w", err)
		}
		accts = append(accts, acct)
	}
	return accts, nil
}

// Stop stops the processes and removes their data.
func (c *Cluster) Stop() {
	for _, p := range c.procs {
		p.Process.Signal(os.Interrupt)
	}
	for _, p := range c.procs {
		p.Wait()
	}
	os.RemoveAll(c.dir)
}

// FreeAddr is a loopback address whose port was free for TCP and UDP.
func FreeAddr() string {
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if pc, err := net.ListenPacket("udp", addr); err == nil {
			pc.Close()
			return addr
		}
	}
}
