package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/ingest"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// newIngestCluster starts three nodes serving the Ingest API and makes an
// account whose plan allows any rate; it returns the ingest key.
func newIngestCluster(t *testing.T) (*clustertest.Cluster, string, string) {
	t.Helper()
	c := clustertest.NewCluster(t, 3, clustertest.Options{
		Serve: func(n *cluster.Node, mux *http.ServeMux) func() {
			api := ingest.New(ingest.Options{Health: n, Cluster: n, State: clustertest.StateOf(n), RetentionCount: 1 << 20})
			api.Register(mux)
			api.Start()
			return api.Stop
		},
	})
	secret, hash, err := apikey.New(apikey.Ingest)
	if err != nil {
		t.Fatal(err)
	}
	acct := uuid.NewString()
	_, mkHash, _ := apikey.New(apikey.Management)
	res, err := c.Follower().Apply(clustertest.Context(t, 10*time.Second), &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: acct + "@example.com",
		Plan:          &raftv1.Plan{Name: "load", ConfigAsCode: true, IngestRatePerSecond: 1e6, IngestBurst: 1e6},
		IngestKey:     &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "default", Hash: hash},
		ManagementKey: &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "personal", Hash: mkHash},
	}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create account: %v %v", res, err)
	}
	return c, acct, secret
}

// ping posts one event; it reports whether the answer was 200.
func ping(ctx context.Context, client *http.Client, base, key, monitor, eventID string) (bool, error) {
	body := fmt.Sprintf(`{"event_type":"ping","monitor":%q,"status":"complete","event_id":%q}`, monitor, eventID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ping", bytes.NewBufferString(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

// storedIDs returns the event ids stored for the account's monitors, read
// consistently on n.
func storedIDs(t *testing.T, n *clustertest.Node, acct string, monitors []string) map[string]int {
	t.Helper()
	if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatalf("%s: consistent read: %v", n.ID(), err)
	}
	ids := map[string]int{}
	for _, name := range monitors {
		m, err := n.State().MonitorByName(acct, "ping", name)
		if err != nil {
			continue
		}
		events, err := n.State().Events(acct, m.GetUuid(), 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			ids[e.GetEvent().GetEventId()]++
		}
	}
	return ids
}

func TestPingsToAFollowerAreDurableOnEveryNode(t *testing.T) {
	t.Parallel()
	c, acct, key := newIngestCluster(t)
	f := c.Follower()
	// Keys are checked against the node's own copy of the state: wait until
	// the follower has applied the account's creation.
	if err := f.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for i := 0; i < 30; i++ {
		id := fmt.Sprintf("e-%d", i)
		ok, err := ping(clustertest.Context(t, 10*time.Second), http.DefaultClient, f.URL(), key, "backup", id)
		if err != nil || !ok {
			t.Fatalf("ping %d through follower: %v %v", i, ok, err)
		}
		sent = append(sent, id)
	}
	for _, n := range c.Nodes {
		ids := storedIDs(t, n, acct, []string{"backup"})
		for _, id := range sent {
			if ids[id] != 1 {
				t.Fatalf("%s holds event %s %d times", n.ID(), id, ids[id])
			}
		}
	}
}

func TestLeaderKillDuringPingStreamLosesNoAcknowledgedPing(t *testing.T) {
	t.Parallel()
	c, acct, key := newIngestCluster(t)
	monitors := []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"}
	var (
		mu    sync.Mutex
		acked []string
		sent  atomic.Int64
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			client := &http.Client{Timeout: 15 * time.Second}
			for i := 0; ctx.Err() == nil; i++ {
				n := c.Nodes[(w+i)%3]
				id := fmt.Sprintf("w%d-%d", w, i)
				sent.Add(1)
				ok, err := ping(ctx, client, n.URL(), key, monitors[w], id)
				if err == nil && ok {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		}(w)
	}
	// The stream runs until 50 pings are acknowledged before the kill
	// and 50 more after a new leader is known, however slow the machine.
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	waitAcked := func(n int, what string) {
		deadline := time.Now().Add(30 * time.Second)
		for ackedCount() < n {
			if time.Now().After(deadline) {
				cancel()
				wg.Wait()
				t.Fatalf("only %d pings acknowledged %s: the stream did not run", ackedCount(), what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitAcked(50, "before the kill")
	leader := c.Leader(5 * time.Second)
	c.Kill(leader.Index)
	if _, err := c.WaitLeader(10*time.Second, c.Running()...); err != nil {
		t.Fatal(err)
	}
	waitAcked(ackedCount()+50, "after the new leader")
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for _, n := range c.Running() {
		ids := storedIDs(t, n, acct, monitors)
		for _, id := range acked {
			if ids[id] != 1 {
				t.Fatalf("%s holds acknowledged ping %s %d times", n.ID(), id, ids[id])
			}
		}
		for id, count := range ids {
			if count != 1 {
				t.Fatalf("%s stored ping %s %d times", n.ID(), id, count)
			}
		}
		t.Logf("%s: %d sent, %d acknowledged, %d stored", n.ID(), sent.Load(), len(acked), len(ids))
	}
}
