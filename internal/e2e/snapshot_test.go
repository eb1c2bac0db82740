package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookout/internal/client"
)

// startNodes starts count control processes that bootstrap together, with
// extra flags, and waits for their leader.
func startNodes(t *testing.T, prefix string, count int, extra ...string) []*node {
	t.Helper()
	nodes := make([]*node, count)
	for i := range nodes {
		nodes[i] = &node{id: fmt.Sprintf("%s%d", prefix, i+1), http: freeAddr(t), raft: freeAddr(t), gossip: freeAddr(t)}
		nodes[i].admin = client.NewAdmin("http://"+nodes[i].http, token, nil)
	}
	dataDir := t.TempDir()
	for i, n := range nodes {
		var join []string
		for j, o := range nodes {
			if j != i {
				join = append(join, o.gossip)
			}
		}
		args := []string{"control", "--node-id", n.id, "--data-dir", dataDir + "/" + n.id,
			"--http-addr", n.http, "--raft-addr", n.raft, "--gossip-addr", n.gossip,
			"--bootstrap-expect", fmt.Sprint(count), "--admin-token", token, "--log-level", "warn"}
		args = append(args, extra...)
		if len(join) > 0 {
			args = append(args, "--join", strings.Join(join, ","))
		}
		n.args = args
		n.proc = start(t, n.id, args...)
	}
	waitLeader(t, nodes, count, 60*time.Second)
	return nodes
}

// follower returns a node of nodes that is not the leader.
func follower(t *testing.T, nodes []*node) *node {
	t.Helper()
	leader := waitLeader(t, nodes, len(nodes), 30*time.Second)
	for _, n := range nodes {
		if n.id != leader {
			return n
		}
	}
	t.Fatal("no follower")
	return nil
}

// adminCLI runs lookout admin against n and returns its output.
func adminCLI(t *testing.T, n *node, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"admin", "--addr", n.http, "--admin-token", token}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// ping sends one ping to n with key.
func ping(t *testing.T, n *node, key, monitor string) {
	t.Helper()
	in := client.NewIngest("http://"+n.http, key, nil)
	if _, err := in.Ping(ctxT(t, 20*time.Second), client.Event{EventType: "ping", Monitor: monitor, Status: "complete"}); err != nil {
		t.Fatalf("ping through %s: %v", n.id, err)
	}
}

// waitUsage waits until n's own copy of the account shows the usage.
func waitUsage(t *testing.T, n *node, id string, monitors, events int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		a, err := n.admin.GetAccount(ctxT(t, 10*time.Second), id, true)
		if err == nil && a.Usage.Monitors == monitors && a.Usage.EventsThisPeriod == events {
			return
		}
		last = fmt.Sprintf("%+v, %v", a, err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: account %s never had %d monitors and %d events; last %s", n.id, id, monitors, events, last)
}

// TestSnapshotSaveRestore saves the state of a 3-node cluster with
// accounts and pings through a follower, refuses a truncated file without
// changing anything, and restores the file into a fresh single node (which
// starts again on its data directory afterwards) and a fresh 3-node
// cluster (through a follower): every node holds the data and takes
// writes afterwards.
func TestSnapshotSaveRestore(t *testing.T) {
	t.Parallel()
	src := startNodes(t, "s", 3)
	accounts := make([]*client.CreatedAccount, 3)
	for i := range accounts {
		a, err := src[i].admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{Email: fmt.Sprintf("user%d@example.com", i)})
		if err != nil {
			t.Fatal(err)
		}
		accounts[i] = a
		for j := range 4 {
			ping(t, src[j%3], a.IngestKey, "nightly")
		}
	}
	file := filepath.Join(t.TempDir(), "backup.snap")
	if out, err := adminCLI(t, follower(t, src), "snapshot", "save", file); err != nil || !strings.Contains(out, `"applied_index"`) {
		t.Fatalf("snapshot save: %v\n%s", err, out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.snap")
	if err := os.WriteFile(truncated, data[:len(data)*2/3], 0o600); err != nil {
		t.Fatal(err)
	}

	// A fresh single node: a truncated file is refused by the CLI and by
	// the node (400), and changes nothing.
	single := startNodes(t, "a", 1)
	pre, err := single[0].admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{Email: "pre@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := adminCLI(t, single[0], "snapshot", "restore", truncated); err == nil || !strings.Contains(out, "invalid snapshot file") {
		t.Fatalf("restore of a truncated file through the CLI: %v\n%s", err, out)
	}
	_, err = single[0].admin.RestoreSnapshot(ctxT(t, 30*time.Second), bytes.NewReader(data[:len(data)-10]), int64(len(data)-10))
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "invalid_snapshot" {
		t.Fatalf("restore of a truncated file: %v, want 400 invalid_snapshot", err)
	}
	if _, err := single[0].admin.GetAccount(ctxT(t, 10*time.Second), pre.ID, false); err != nil {
		t.Fatalf("a refused restore changed the state: %v", err)
	}

	// The real file restores.
	if out, err := adminCLI(t, single[0], "snapshot", "restore", file); err != nil {
		t.Fatalf("snapshot restore: %v\n%s", err, out)
	}
	if _, err := single[0].admin.GetAccount(ctxT(t, 10*time.Second), pre.ID, false); err == nil {
		t.Error("the account made before the restore survived it")
	}
	checkRestored(t, single, accounts)
	// Killed, it starts again on its data directory with the restored
	// state, and takes writes.
	single[0].proc.kill()
	single[0].proc = start(t, single[0].id+"-restart", single[0].args...)
	waitHealthy(t, single[0], 60*time.Second)
	ids := []string{}
	for _, a := range accounts {
		ids = append(ids, a.ID)
	}
	requireAccounts(t, single, ids)
	if _, err := single[0].admin.GetAccount(ctxT(t, 10*time.Second), pre.ID, false); err == nil {
		t.Error("the account made before the restore is back after a restart")
	}
	ping(t, single[0], accounts[0].IngestKey, "after-restart")

	// A fresh 3-node cluster, restored through a follower.
	dst := startNodes(t, "b", 3)
	if out, err := adminCLI(t, follower(t, dst), "snapshot", "restore", file); err != nil {
		t.Fatalf("snapshot restore into 3 nodes: %v\n%s", err, out)
	}
	checkRestored(t, dst, accounts)
}

// checkRestored checks that every node holds the saved accounts and their
// pings, and that writes go on: a new account and a ping of a restored key.
func checkRestored(t *testing.T, nodes []*node, accounts []*client.CreatedAccount) {
	t.Helper()
	for _, n := range nodes {
		for _, a := range accounts {
			waitUsage(t, n, a.ID, 1, 4)
		}
	}
	for i, n := range nodes {
		if _, err := n.admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{Email: "after-" + n.id + "@example.com"}); err != nil {
			t.Fatalf("write through %s after the restore: %v", n.id, err)
		}
		ping(t, n, accounts[i%len(accounts)].IngestKey, "after")
	}
	for _, n := range nodes {
		for i, a := range accounts {
			want := int64(0)
			for j := range nodes {
				if j%len(accounts) == i {
					want++
				}
			}
			if want > 0 {
				waitUsage(t, n, a.ID, 2, 4+want)
			}
		}
	}
}
