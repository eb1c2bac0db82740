package assign_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"lookout/agent/agenttest"
	"lookout/agent/assign"
	"lookout/agent/link"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func check(id, schedule string) *agentv1.Check {
	return &agentv1.Check{Id: id, AccountId: "acc1", Name: id, Kind: "http_check", Schedule: schedule,
		Config: &raftv1.CheckConfig{Url: "http://example.invalid/" + id}}
}

func key(id, hash string) *agentv1.IngestKey {
	return &agentv1.IngestKey{Id: id, Hash: []byte(hash), AccountId: "acc1", Plan: &raftv1.Plan{}}
}

func newLink(t *testing.T, urls ...string) *link.Client {
	t.Helper()
	c, err := link.New(link.Options{URLs: urls, Token: "at_ok", Agent: &agentv1.AgentIdentity{Id: "ag_1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdle)
	return c
}

// watch runs a watcher until the test ends; the returned channel gets
// Run's error.
func watch(t *testing.T, o assign.WatcherOptions) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done, stopped := make(chan error, 1), make(chan struct{})
	if o.Backoff.Min == 0 {
		o.Backoff = link.Backoff{Min: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	}
	go func() {
		defer close(stopped)
		done <- assign.NewWatcher(o).Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Error("the watcher did not stop")
		}
	})
	return done
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func has(s *assign.Store, checks map[string]uint64, keys ...string) bool {
	got := s.Checks()
	if len(got) != len(checks) {
		return false
	}
	for _, c := range got {
		if v, ok := checks[c.GetId()]; !ok || v != c.GetVersion() {
			return false
		}
	}
	_, nk := s.Counts()
	if nk != len(keys) {
		return false
	}
	for _, h := range keys {
		if _, ok := s.KeyByHash([]byte(h)); !ok {
			return false
		}
	}
	return true
}

// TestDeltasAppliedAndPersisted: the initial difference and every later
// change are applied, and the file always holds the whole set.
func TestDeltasAppliedAndPersisted(t *testing.T) {
	dir := t.TempDir()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutCheck(check("c1", "1m"))
	cp.PutCheck(check("c2", "5m"))
	cp.PutKey(key("k1", "hash-1"))
	st, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	watch(t, assign.WatcherOptions{Link: newLink(t, cp.URL()), Store: st, Region: "eu-1"})
	eventually(t, "the initial set", func() bool { return has(st, map[string]uint64{"c1": 1, "c2": 1}, "hash-1") })
	if st.Region() != "eu-1" {
		t.Fatalf("region %q", st.Region())
	}

	changed := check("c1", "2m")
	cp.PutCheck(changed) // version 2
	cp.RemoveCheck("c2")
	cp.PutCheck(check("c3", "30s"))
	cp.RemoveKey("k1")
	cp.PutKey(key("k2", "hash-2"))
	want := map[string]uint64{"c1": 2, "c3": 1}
	eventually(t, "the changes", func() bool { return has(st, want, "hash-2") })
	if _, ok := st.KeyByHash([]byte("hash-1")); ok {
		t.Fatal("a removed key is still accepted")
	}
	for _, c := range st.Checks() {
		if c.GetId() == "c1" && c.GetSchedule() != "2m" {
			t.Fatalf("c1 not replaced: %v", c)
		}
	}
	// The file holds the same set.
	eventually(t, "the file", func() bool {
		again, err := assign.Open(dir)
		return err == nil && has(again, want, "hash-2") && again.Region() == "eu-1"
	})
}

// TestRestartWhileCutOff: a restarted agent whose control plane is down
// has its last assignments from disk, keeps them while it cannot
// connect, and when a node answers asks for the difference only.
func TestRestartWhileCutOff(t *testing.T) {
	dir := t.TempDir()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutCheck(check("c1", "1m"))
	cp.PutCheck(check("c2", "1m"))
	cp.PutKey(key("k1", "hash-1"))
	st, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- assign.NewWatcher(assign.WatcherOptions{Link: newLink(t, cp.URL()), Store: st}).Run(ctx)
	}()
	eventually(t, "the initial set", func() bool { return has(st, map[string]uint64{"c1": 1, "c2": 1}, "hash-1") })
	cancel()
	<-done
	cp.Close()

	// Restart while every control node is down.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	st2, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !has(st2, map[string]uint64{"c1": 1, "c2": 1}, "hash-1") {
		t.Fatalf("the restarted agent holds %v", st2.Checks())
	}
	l2 := newLink(t, down)
	watch(t, assign.WatcherOptions{Link: l2, Store: st2})
	time.Sleep(300 * time.Millisecond) // several failed rounds
	if !has(st2, map[string]uint64{"c1": 1, "c2": 1}, "hash-1") || l2.State() != link.Disconnected {
		t.Fatalf("while cut off: %v, link %v", st2.Checks(), l2.State())
	}

	// A control node comes back (another one, with c2 gone and c1 changed).
	cp2 := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp2.PutCheck(check("c1", "1m"))
	cp2.PutCheck(check("c1", "1m")) // version 2
	cp2.PutKey(key("k1", "hash-1"))
	st3, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	watch(t, assign.WatcherOptions{Link: newLink(t, down, cp2.URL()), Store: st3})
	eventually(t, "the difference", func() bool { return has(st3, map[string]uint64{"c1": 2}, "hash-1") })
	req := cp2.Requests()[0]
	if len(req.GetChecks()) != 2 || len(req.GetKeys()) != 1 {
		t.Fatalf("the agent said it holds %v", req)
	}
}

// TestRevokedKeepsAssignments: a revoked token ends the stream; the agent
// keeps its assignments (memory and disk) and retries slowly; a valid
// token resumes.
func TestRevokedKeepsAssignments(t *testing.T) {
	dir := t.TempDir()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutCheck(check("c1", "1m"))
	cp.PutKey(key("k1", "hash-1"))
	st, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := newLink(t, cp.URL())
	watch(t, assign.WatcherOptions{Link: l, Store: st, Revoked: 300 * time.Millisecond})
	eventually(t, "the initial set", func() bool { return has(st, map[string]uint64{"c1": 1}, "hash-1") })
	cp.Revoke()
	eventually(t, "the refusal", func() bool { return l.State() == link.Unauthenticated })
	n0 := cp.Calls("Assignments")
	time.Sleep(time.Second)
	again, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !has(st, map[string]uint64{"c1": 1}, "hash-1") || !has(again, map[string]uint64{"c1": 1}, "hash-1") {
		t.Fatal("a revoked agent dropped its assignments")
	}
	// One attempt every 300 ms, not the 20 ms backoff of other failures.
	if n := cp.Calls("Assignments") - n0; n < 1 || n > 4 {
		t.Fatalf("%d stream attempts in the second after a refusal; want 1 to 4 (slow retries)", n)
	}
	cp.SetToken("at_ok")
	cp.PutCheck(check("c2", "1m"))
	eventually(t, "resumed", func() bool {
		return has(st, map[string]uint64{"c1": 1, "c2": 1}, "hash-1") && l.State() == link.Connected
	})
}

func TestWrongRegionStops(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "us-1", "at_ok")
	st, err := assign.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	done := watch(t, assign.WatcherOptions{Link: newLink(t, cp.URL()), Store: st, Region: "eu-1"})
	select {
	case err := <-done:
		if !errors.Is(err, assign.ErrWrongRegion) {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a token of another region was accepted")
	}
}

// TestSilentStreamDropped: a stream with no message (not even a
// keepalive) for IdleTimeout is dropped and opened again.
func TestSilentStreamDropped(t *testing.T) {
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok") // keepalive every 15 s
	st, err := assign.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	watch(t, assign.WatcherOptions{Link: newLink(t, cp.URL()), Store: st, IdleTimeout: 200 * time.Millisecond})
	eventually(t, "a second stream", func() bool { return cp.Calls("Assignments") >= 2 })
}

func TestStoreIgnoresKeepalive(t *testing.T) {
	st, err := assign.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	changed, err := st.Apply(&agentv1.AssignmentsResponse{Checks: []*agentv1.Check{check("c1", "1m")}})
	if !changed || err != nil {
		t.Fatalf("apply: %v %v", changed, err)
	}
	<-st.Changed()
	changed, err = st.Apply(&agentv1.AssignmentsResponse{ServerUnixMs: 5})
	if changed || err != nil {
		t.Fatalf("keepalive changed the set: %v %v", changed, err)
	}
	changed, _ = st.Apply(&agentv1.AssignmentsResponse{Checks: []*agentv1.Check{proto.Clone(check("c1", "1m")).(*agentv1.Check)}})
	if changed {
		t.Fatal("an identical check counted as a change")
	}
}

// gossip records the keys a watcher hands on.
type gossip struct {
	keys   chan []byte
	tokens chan string
}

func (g gossip) SetKey(key []byte, tokenID string) error {
	g.keys <- key
	g.tokens <- tokenID
	return nil
}

// TestGossipKeyKept: the region's gossip key and the token's id of the
// stream are handed to the pool and kept on disk with the assignments, so
// an agent restarted while cut off still has them.
func TestGossipKeyKept(t *testing.T) {
	dir := t.TempDir()
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	k := []byte("0123456789abcdef0123456789abcdef")
	cp.SetGossip(k, "tok-1")
	st, err := assign.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if key, tok := st.GossipKey(); key != nil || tok != "" {
		t.Fatalf("a new store holds key %x token %q", key, tok)
	}
	g := gossip{keys: make(chan []byte, 10), tokens: make(chan string, 10)}
	watch(t, assign.WatcherOptions{Link: newLink(t, cp.URL()), Store: st, Gossip: g})
	select {
	case got := <-g.keys:
		if string(got) != string(k) || <-g.tokens != "tok-1" {
			t.Fatalf("the pool was given key %x", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pool got no key")
	}
	// The pool gets the key before the assignments are applied and saved.
	eventually(t, "the key saved", func() bool {
		again, err := assign.Open(dir)
		if err != nil {
			return false
		}
		key, tok := again.GossipKey()
		return string(key) == string(k) && tok == "tok-1"
	})
}

// TestDamagedFileDroppedAndResynced: an assignments file of garbage is
// dropped at Open (Dropped says why, the file is gone) instead of stopping
// the agent; the stream then sends the whole set, which is saved again.
// Save writes the set again after the data dir was removed.
func TestDamagedFileDroppedAndResynced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, assign.FileName)
	if err := os.WriteFile(path, []byte("\xff\xff\xff\xffnot a protobuf"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := assign.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if d := st.Dropped(); d == nil || !strings.Contains(d.Error(), path) {
		t.Fatalf("Dropped = %v", d)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the damaged file is still there: %v", err)
	}
	if nc, nk := st.Counts(); nc+nk != 0 {
		t.Fatalf("holds %d checks, %d keys", nc, nk)
	}
	cp := agenttest.NewControlPlane(t, "eu-1", "at_ok")
	cp.PutCheck(check("c1", "1m"))
	cp.PutKey(key("k1", "hash-1"))
	watch(t, assign.WatcherOptions{Link: newLink(t, cp.URL()), Store: st})
	eventually(t, "the resync", func() bool { return has(st, map[string]uint64{"c1": 1}, "hash-1") })
	if req := cp.Requests()[0]; len(req.GetChecks())+len(req.GetKeys()) != 0 {
		t.Fatalf("the agent said it holds %v", req)
	}
	eventually(t, "the file saved", func() bool {
		again, err := assign.Open(dir)
		return err == nil && again.Dropped() == nil && has(again, map[string]uint64{"c1": 1}, "hash-1")
	})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(); err != nil {
		t.Fatal(err)
	}
	if again, err := assign.Open(dir); err != nil || !has(again, map[string]uint64{"c1": 1}, "hash-1") {
		t.Fatalf("after Save: %v", err)
	}
}
