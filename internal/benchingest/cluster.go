package main

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

const adminToken = "benchingest-admin-token"

// cluster is a set of lookout control processes on loopback.
type cluster struct {
	dir   string
	procs []*exec.Cmd
	urls  []string // host:port of each node's HTTP listener
}

// startCluster starts n lookout control processes and waits for a leader.
func startCluster(ctx context.Context, binary string, n int) (*cluster, error) {
	dir, err := os.MkdirTemp("", "benchingest")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	type addrs struct{ http, raft, gossip string }
	var as []addrs
	for i := 0; i < n; i++ {
		as = append(as, addrs{freeAddr(), freeAddr(), freeAddr()})
	}
	for i, a := range as {
		args := []string{"control", "--data-dir", filepath.Join(dir, fmt.Sprint(i)), "--http-addr", a.http, "--raft-addr", a.raft,
			"--admin-token", adminToken, "--log-level", "warn"}
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
			c.stop()
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			c.stop()
			return nil, fmt.Errorf("start %s: %w", binary, err)
		}
		c.procs = append(c.procs, cmd)
		c.urls = append(c.urls, a.http)
	}
	if err := c.waitLeader(ctx, 60*time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) admin(i int) *client.Admin {
	return client.NewAdmin("http://"+c.urls[i], adminToken, nil)
}

func (c *cluster) waitLeader(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		st, err := c.admin(0).ClusterStatus(ctx)
		if err == nil && st.Leader != "" {
			resp, err := http.Get("http://" + c.urls[0] + "/health")
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

// makeAccounts creates n accounts whose plans allow any ingest rate and
// returns their ingest keys.
func (c *cluster) makeAccounts(ctx context.Context, n int) ([]string, error) {
	rate, burst := 1e6, int64(1e6)
	var keys []string
	for i := 0; i < n; i++ {
		acct, err := c.admin(i%len(c.urls)).CreateAccount(ctx, client.CreateAccountRequest{
			Email: fmt.Sprintf("bench%d@example.com", i),
			Plan:  &client.PlanRequest{IngestRatePerSecond: &rate, IngestBurst: &burst},
		})
		if err != nil {
			return nil, fmt.Errorf("create account: %w", err)
		}
		keys = append(keys, acct.IngestKey)
	}
	return keys, nil
}

func (c *cluster) stop() {
	for _, p := range c.procs {
		p.Process.Signal(os.Interrupt)
	}
	for _, p := range c.procs {
		p.Wait()
	}
	os.RemoveAll(c.dir)
}

// freeAddr is a loopback address whose port was free for TCP and UDP.
func freeAddr() string {
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
