package manage_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/manage"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestApplyThroughAFollowerIsReadFromEveryNode applies a bundle through a
// follower of a 3-node cluster and lists it, consistently, on every node,
// with its audit entries and the key that made them.
func TestApplyThroughAFollowerIsReadFromEveryNode(t *testing.T) {
	c := clustertest.NewCluster(t, 3, clustertest.Options{
		Serve: func(n *cluster.Node, mux *http.ServeMux) func() {
			manage.New(manage.Options{Cluster: n, State: clustertest.StateOf(n)}).Register(mux)
			return func() {}
		},
	})
	key, hash, _ := apikey.New(apikey.Management)
	_, ingestHash, _ := apikey.New(apikey.Ingest)
	acct := uuid.NewString()
	res, err := c.Leader(5*time.Second).Apply(clustertest.Context(t, 10*time.Second), &raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: "ops@example.com", Plan: &raftv1.Plan{Name: "default", ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20},
		IngestKey:     &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "default", Hash: ingestHash},
		ManagementKey: &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "personal", Scopes: []string{"read", "write", "delete"}, Hash: hash},
	}}})
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("create account: %v %v", res, err)
	}
	var monitors []map[string]any
	for i := 0; i < 20; i++ {
		monitors = append(monitors, ping(fmt.Sprintf("job-%02d", i), nil))
	}
	body, _ := json.Marshal(bundle(monitors...))
	f := c.Follower()
	if err := f.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil { // the key is known there
		t.Fatal(err)
	}
	status, report := call(t, "POST", f.URL()+"/api/v1/monitors/apply", key, body)
	if status != 200 || summary(report)["create"] != 20 {
		t.Fatalf("apply through %s: %d %v", f.ID(), status, report)
	}
	for _, n := range c.Nodes {
		status, list := call(t, "GET", n.URL()+"/api/v1/monitors", key, nil)
		if status != 200 || len(list["monitors"].([]any)) != 20 {
			t.Fatalf("%s lists %d %v", n.ID(), status, list)
		}
		// The key that asked is the actor of every entry, on every node:
		// the actor travels with the command through the follower.
		status, log := call(t, "GET", n.URL()+"/api/v1/audit?action=apply", key, nil)
		entries, _ := log["entries"].([]any)
		if status != 200 || len(entries) != 20 {
			t.Fatalf("%s has %d %v", n.ID(), status, log)
		}
		for _, e := range entries {
			if actor := e.(map[string]any)["actor"].(map[string]any); actor["type"] != "key" || actor["name"] != "personal" {
				t.Fatalf("%s: actor %v", n.ID(), actor)
			}
		}
	}
}

func call(t *testing.T, method, url, key string, body []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
