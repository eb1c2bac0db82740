package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/ingest"
	"lookout/control/manage"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// newIngestKey creates an ingest key of acct through node n and returns
// its secret and id.
func newIngestKey(t *testing.T, n *clustertest.Node, acct string) (string, string) {
	t.Helper()
	secret, hash, err := apikey.New(apikey.Ingest)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	res, err := n.Apply(clustertest.Context(t, 10*time.Second), &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{
		Key: &raftv1.Key{Id: id, AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "k-" + id, Hash: hash},
	}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create key: %v %v", res, err)
	}
	return secret, id
}

// pingStatus posts one event and returns the answer's status.
func pingStatus(ctx context.Context, base, key, monitor, eventID string) (int, error) {
	body := fmt.Sprintf(`{"event_type":"ping","monitor":%q,"status":"complete","event_id":%q}`, monitor, eventID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ping", bytes.NewBufferString(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestRevokedKeyIsRefusedByEveryNode: once the revocation is acknowledged,
// a ping with the key is stored by no node, even when it reaches a
// follower that has not applied the revocation yet (the state machine
// checks the key again when it applies the batch).
func TestRevokedKeyIsRefusedByEveryNode(t *testing.T) {
	t.Parallel()
	c, acct, _ := newIngestCluster(t)
	leader := c.Leader(5 * time.Second)
	var followers []*clustertest.Node
	for _, n := range c.Nodes {
		if n != leader {
			followers = append(followers, n)
		}
	}
	const trials = 20
	var monitors []string
	for i := range trials {
		secret, id := newIngestKey(t, leader, acct)
		// Every node holds the key before it is revoked, as a follower that
		// authenticated pings with it would.
		for _, n := range c.Nodes {
			if err := n.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := leader.Apply(clustertest.Context(t, 10*time.Second), &raftv1.Command{Op: &raftv1.Command_RevokeKey{
			RevokeKey: &raftv1.RevokeKey{AccountId: acct, KeyId: id},
		}})
		if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("revoke: %v %v", res, err)
		}
		// The revocation is acknowledged: ping both followers at once.
		monitor := fmt.Sprintf("revoked-%d", i)
		monitors = append(monitors, monitor)
		done := make(chan error, len(followers))
		for j, f := range followers {
			go func() {
				eventID := fmt.Sprintf("t%d-f%d", i, j)
				status, err := pingStatus(clustertest.Context(t, 15*time.Second), f.URL(), secret, monitor, eventID)
				if err == nil && status == http.StatusOK {
					err = fmt.Errorf("trial %d: %s accepted a revoked key", i, f.ID())
				}
				if err == nil && status != http.StatusUnauthorized {
					err = fmt.Errorf("trial %d: %s answered %d", i, f.ID(), status)
				}
				done <- err
			}()
		}
		for range followers {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}

	// And surely behind: a follower whose raft port is blocked cannot apply
	// the revocation, still holds the key, authenticates the ping with it
	// and forwards it; only the state machine's check refuses it.
	f := followers[0]
	secret, id := newIngestKey(t, leader, acct)
	if err := f.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.Net.Block(f.RaftAddr())
	res, err := leader.Apply(clustertest.Context(t, 10*time.Second), &raftv1.Command{Op: &raftv1.Command_RevokeKey{
		RevokeKey: &raftv1.RevokeKey{AccountId: acct, KeyId: id},
	}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("revoke: %v %v", res, err)
	}
	if _, err := f.State().KeyByHash(apikey.Hash(secret)); err != nil {
		t.Fatalf("the cut-off follower already lost the key: %v", err)
	}
	monitors = append(monitors, "revoked-cut")
	status, err := pingStatus(clustertest.Context(t, 15*time.Second), f.URL(), secret, "revoked-cut", "cut")
	c.Net.Unblock(f.RaftAddr())
	if err != nil || status != http.StatusUnauthorized {
		t.Fatalf("the cut-off follower answered %d, %v; want 401", status, err)
	}
	c.WaitConverged(20 * time.Second)
	for _, n := range c.Nodes {
		if ids := storedIDs(t, n, acct, monitors); len(ids) != 0 {
			t.Fatalf("%s stored %d events of revoked keys: %v", n.ID(), len(ids), ids)
		}
	}
}

// TestCatchingUpFollowerKnowsNewKeys: a follower that has not applied a
// key's creation (its raft link was cut while the key was made) does not
// answer 401 to the valid key, on the Ingest API or the Management API: it
// checks the key with the leader first.
func TestCatchingUpFollowerKnowsNewKeys(t *testing.T) {
	t.Parallel()
	c := clustertest.NewCluster(t, 3, clustertest.Options{
		Serve: func(n *cluster.Node, mux *http.ServeMux) func() {
			api := ingest.New(ingest.Options{Health: n, Cluster: n, State: clustertest.StateOf(n), RetentionCount: 100})
			api.Register(mux)
			manage.New(manage.Options{Cluster: n, State: clustertest.StateOf(n)}).Register(mux)
			api.Start()
			return api.Stop
		},
	})
	leader := c.Leader(5 * time.Second)
	acct := uuid.NewString()
	_, ikHash, _ := apikey.New(apikey.Ingest)
	_, mkHash, _ := apikey.New(apikey.Management)
	res, err := leader.Apply(clustertest.Context(t, 10*time.Second), &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: acct + "@example.com",
		Plan:          &raftv1.Plan{Name: "p", ConfigAsCode: true, IngestRatePerSecond: 1000, IngestBurst: 1000},
		IngestKey:     &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "i", Hash: ikHash},
		ManagementKey: &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "m", Hash: mkHash},
	}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create account: %v %v", res, err)
	}
	var f *clustertest.Node
	for _, n := range c.Nodes {
		if n != leader {
			f = n
			break
		}
	}
	for i := range 5 {
		if err := f.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
		// Cut the follower's raft port, make keys on the leader (the other
		// follower commits them), heal, and ask the follower at once.
		c.Net.Block(f.RaftAddr())
		ingestKey, _ := newIngestKey(t, leader, acct)
		mgmtKey := newManagementKey(t, leader, acct)
		c.Net.Unblock(f.RaftAddr())
		checkIngest := func() {
			status, err := pingStatus(clustertest.Context(t, 15*time.Second), f.URL(), ingestKey, "catch-up", fmt.Sprintf("e%d", i))
			if err != nil || status != http.StatusOK {
				t.Fatalf("trial %d: ping with a new key through a catching-up follower: %d %v", i, status, err)
			}
		}
		checkManage := func() {
			req, _ := http.NewRequestWithContext(clustertest.Context(t, 15*time.Second), "GET", f.URL()+"/api/v1/monitors?stale=true", nil)
			req.Header.Set("Authorization", "Bearer "+mgmtKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("trial %d: management call with a new key through a catching-up follower: %d", i, resp.StatusCode)
			}
		}
		// The first call catches the follower up: take turns.
		if i%2 == 0 {
			checkIngest()
			checkManage()
		} else {
			checkManage()
			checkIngest()
		}
	}
}

// newManagementKey creates a read-only management key of acct through n.
func newManagementKey(t *testing.T, n *clustertest.Node, acct string) string {
	t.Helper()
	secret, hash, err := apikey.New(apikey.Management)
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.NewString()
	res, err := n.Apply(clustertest.Context(t, 10*time.Second), &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{
		Key: &raftv1.Key{Id: id, AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "m-" + id, Scopes: []string{"read"}, Hash: hash},
	}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create key: %v %v", res, err)
	}
	return secret
}
