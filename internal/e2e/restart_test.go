package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lookout/internal/client"
)

// TestKilledNodeAlwaysComesBack kills one node of three twice in a row
// the way that once broke its raft log for good: first as a leader with
// entries it had not replicated (its followers killed before it, so none
// can have received them), so that it comes back as a follower and raft
// clears that tail of its log, then again. It must come back healthy each
// time with every acknowledged write. Then its log is damaged on disk: it
// must refuse to start with one line that says what to do, and the
// procedure that line names (move the data directory aside, start again)
// must bring it back with the data.
func TestKilledNodeAlwaysComesBack(t *testing.T) {
	t.Parallel()
	// A leader lease of 1 s: the leader whose followers are gone goes on
	// appending the writes sent to it, however slow the machine.
	nodes := startNodes(t, "k", 3, "--raft-timeout", "2s")
	leaderID := waitLeader(t, nodes, 3, 30*time.Second)
	var victim *node
	var others []*node
	for _, n := range nodes {
		if n.id == leaderID {
			victim = n
		} else {
			others = append(others, n)
		}
	}
	var ids []string
	create := func(through *node, name string) {
		t.Helper()
		acct, err := through.admin.CreateAccount(ctxT(t, 20*time.Second), client.CreateAccountRequest{Email: name + "@example.com"})
		if err != nil {
			t.Fatalf("create %s through %s: %v", name, through.id, err)
		}
		ids = append(ids, acct.ID)
	}
	create(victim, "before")

	// The leader appends writes its killed followers never receive, and is
	// killed with them; the followers come back and elect a leader of
	// their own, whose entries take those indexes.
	for _, o := range others {
		o.proc.kill()
	}
	for i := range 5 {
		go victim.admin.CreateAccount(ctxT(t, 2*time.Second), client.CreateAccountRequest{Email: fmt.Sprintf("unreplicated%d@example.com", i)})
	}
	time.Sleep(500 * time.Millisecond)
	victim.proc.kill()
	for _, o := range others {
		o.proc = start(t, o.id+"-restart", o.args...)
	}
	waitLeader(t, others, 2, 60*time.Second)
	create(others[0], "while-down") // the new term's entries at those indexes

	// Back as a follower: raft clears the conflicting tail of its log.
	victim.proc = start(t, victim.id+"-restart1", victim.args...)
	waitHealthy(t, victim, 60*time.Second)
	logText := readLog(t, victim.proc)
	if !strings.Contains(logText, "clearing log suffix") {
		t.Fatalf("%s did not clear a log suffix on its return; the test did not set up what it tests. Its log:\n%s", victim.id, tail([]byte(logText), 4096))
	}
	create(victim, "after-first-return")

	// Killed again (the start that used to fail for ever).
	victim.proc.kill()
	victim.proc = start(t, victim.id+"-restart2", victim.args...)
	waitHealthy(t, victim, 60*time.Second)
	create(victim, "after-second-return")
	requireAccounts(t, nodes, ids)

	// A damaged log: one clear line, then the documented procedure.
	victim.proc.kill()
	dataDir := argAfter(victim.args, "--data-dir")
	meta := filepath.Join(dataDir, "raft-wal", "wal-meta.db")
	if err := os.WriteFile(meta, []byte("not a bolt database, not at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := start(t, victim.id+"-broken", victim.args...)
	select {
	case <-broken.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s started on a damaged raft log", victim.id)
	}
	if broken.cmd.ProcessState.Success() {
		t.Fatalf("%s exited 0 on a damaged raft log", victim.id)
	}
	lines := strings.Split(strings.TrimSpace(readLog(t, broken)), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"lookout: raft log", "cannot be read", "move its data directory aside", "docs/reliability.md"} {
		if !strings.Contains(last, want) {
			t.Fatalf("last line %q does not say %q", last, want)
		}
	}
	if err := os.Rename(dataDir, dataDir+".damaged"); err != nil {
		t.Fatal(err)
	}
	victim.proc = start(t, victim.id+"-fresh", victim.args...)
	waitHealthy(t, victim, 90*time.Second)
	create(victim, "after-fresh-start")
	requireAccounts(t, nodes, ids)
}

// waitHealthy waits until n answers GET /health with 200.
func waitHealthy(t *testing.T, n *node, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	httpc := &http.Client{Timeout: 2 * time.Second}
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-n.proc.done:
			t.Fatalf("%s exited: %v", n.id, n.proc.cmd.ProcessState)
		default:
		}
		resp, err := httpc.Get("http://" + n.http + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s not healthy after %s: %s", n.id, timeout, last)
}

// requireAccounts checks that every node's own copy has every account.
func requireAccounts(t *testing.T, nodes []*node, ids []string) {
	t.Helper()
	for _, n := range nodes {
		waitUntil(t, 30*time.Second, func() error {
			for _, id := range ids {
				if _, err := n.admin.GetAccount(ctxT(t, 5*time.Second), id, true); err != nil {
					return fmt.Errorf("%s: account %s: %w", n.id, id, err)
				}
			}
			return nil
		})
	}
}

// waitUntil retries check until it returns nil or timeout passes.
func waitUntil(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// readLog is what p wrote to its stderr so far.
func readLog(t *testing.T, p *proc) string {
	t.Helper()
	b, err := os.ReadFile(p.logf.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// argAfter is the argument after flag in args.
func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
