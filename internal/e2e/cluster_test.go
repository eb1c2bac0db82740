package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"lookout/internal/client"
)

const token = "e2e-admin-token-0123456789"

type node struct {
	id                 string
	http, raft, gossip string
	proc               *proc
	admin              *client.Admin
	args               []string // lookout's arguments, to start it again
}

// TestThreeProcessesSurviveLeaderKill starts three lookout control
// processes that bootstrap together, writes through all of them, kills the
// leader with SIGKILL, and checks that the survivors elect a leader, keep
// every acknowledged write and keep serving the operator API.
func TestThreeProcessesSurviveLeaderKill(t *testing.T) {
	t.Parallel()
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = &node{id: fmt.Sprintf("n%d", i+1), http: freeAddr(t), raft: freeAddr(t), gossip: freeAddr(t)}
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
		n.proc = start(t, n.id, "control", "--node-id", n.id, "--data-dir", dataDir+"/"+n.id,
			"--http-addr", n.http, "--raft-addr", n.raft, "--gossip-addr", n.gossip,
			"--bootstrap-expect", "3", "--join", strings.Join(join, ","),
			"--admin-token", token, "--log-level", "warn")
	}
	leader := waitLeader(t, nodes, 3, 60*time.Second)

	// Acknowledged writes, through every node.
	var ids []string
	for i := 0; i < 9; i++ {
		acct, err := nodes[i%3].admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{Email: fmt.Sprintf("user%d@example.com", i)})
		if err != nil {
			t.Fatalf("create account through %s: %v", nodes[i%3].id, err)
		}
		ids = append(ids, acct.ID)
	}

	// Kill the leader.
	var dead *node
	var survivors []*node
	for _, n := range nodes {
		if n.id == leader {
			dead = n
		} else {
			survivors = append(survivors, n)
		}
	}
	dead.proc.kill()
	newLeader := waitLeader(t, survivors, 2, 30*time.Second)
	if newLeader == dead.id {
		t.Fatalf("the killed node %s is still reported as leader", dead.id)
	}

	for _, n := range survivors {
		for _, id := range ids {
			if _, err := n.admin.GetAccount(ctxT(t, 20*time.Second), id, false); err != nil {
				t.Fatalf("%s lost acknowledged account %s: %v", n.id, id, err)
			}
		}
		if _, err := n.admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{Email: "after-" + n.id + "@example.com"}); err != nil {
			t.Fatalf("create account through %s after the kill: %v", n.id, err)
		}
	}
	st, err := survivors[0].admin.ClusterStatus(ctxT(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Nodes {
		if s.ID == dead.id && s.Role != "gone" {
			t.Fatalf("killed node %s has role %q, want gone", dead.id, s.Role)
		}
	}
}

// waitLeader polls the cluster status of nodes until one reports a leader
// among them and at least voters running voters, and returns its id.
func waitLeader(t *testing.T, nodes []*node, voters int, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			st, err := n.admin.ClusterStatus(ctxT(t, 3*time.Second))
			if err != nil {
				last = err
				continue
			}
			live := 0
			for _, s := range st.Nodes {
				if s.Voter && s.Role != "gone" {
					live++
				}
			}
			if st.Leader != "" && live >= voters && contains(nodes, st.Leader) {
				return st.Leader
			}
			last = errors.New("no leader yet")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no leader with %d live voters: %v", voters, last)
	return ""
}

func contains(nodes []*node, id string) bool {
	for _, n := range nodes {
		if n.id == id {
			return true
		}
	}
	return false
}
