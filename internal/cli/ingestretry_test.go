package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/control/admin"
	"lookout/control/controltest"
	"lookout/control/ingest"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// catchingUpCluster is a node that does not hold a key yet and cannot
// reach the leader for its first `fail` consistent reads; then it catches
// up (runs catchUp once).
type catchingUpCluster struct {
	*controltest.Cluster
	mu      sync.Mutex
	fail    int
	catchUp func() error
}

func (c *catchingUpCluster) ConsistentRead(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail > 0 {
		c.fail--
		return fmt.Errorf("read index: %w", cluster.ErrNoLeader)
	}
	if c.catchUp != nil {
		err := c.catchUp()
		c.catchUp = nil
		return err
	}
	return nil
}

// TestPingAndExecRetryUnverifiedKeys: a node that cannot check a key it
// does not hold answers 503 with Retry-After; lookout ping and lookout exec
// retry, and their events are stored once the node has caught up.
func TestPingAndExecRetryUnverifiedKeys(t *testing.T) {
	srv := controltest.NewServer(t)
	acct, err := srv.API.CreateAccount(context.Background(), admin.AccountRequest{Email: "cli@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		run  func(env *testEnv) error
		want int // events stored
	}{
		{"ping", func(env *testEnv) error {
			return runPingEnv(context.Background(), []string{"nightly", "--status", "run"}, env.ingestEnv)
		}, 1},
		{"exec", func(env *testEnv) error {
			return runExecTest(t, env, "nightly", "--", "sh", "-c", "exit 0")
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret, hash, err := apikey.New(apikey.Ingest)
			if err != nil {
				t.Fatal(err)
			}
			cl := &catchingUpCluster{Cluster: srv.Cluster, fail: 2, catchUp: func() error {
				_, err := srv.Cluster.Apply(context.Background(), &raftv1.Command{Op: &raftv1.Command_CreateKey{CreateKey: &raftv1.CreateKey{
					Key: &raftv1.Key{Id: uuid.NewString(), AccountId: acct.ID, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: tc.name, Hash: hash},
				}}})
				return err
			}}
			api := ingest.New(ingest.Options{Cluster: cl, State: srv.Store, RetentionCount: 100})
			api.Start()
			defer api.Stop()
			mux := http.NewServeMux()
			api.Register(mux)
			hs := httptest.NewServer(mux)
			defer hs.Close()

			env := newTestEnv(hs.URL)
			env.vars["LOOKOUT_INGEST_KEY"] = secret
			if err := tc.run(env); err != nil {
				t.Fatalf("error %v; stderr %q", err, env.stderr)
			}
			if slept := env.clock.slept(); len(slept) < 2 {
				t.Fatalf("slept %v: the 503s were not retried", slept)
			}
			m, err := srv.Store.MonitorByName(acct.ID, "ping", "nightly")
			if err != nil {
				t.Fatal(err)
			}
			evs, err := srv.Store.Events(acct.ID, m.GetUuid(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) < tc.want {
				t.Fatalf("%d events stored, want at least %d", len(evs), tc.want)
			}
		})
	}
}

// TestPingRetriesDroppedConnections: a connection that closes before the
// answer is retried with the same event.
func TestPingRetriesDroppedConnections(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"success"}`))
	}))
	defer hs.Close()
	env := newTestEnv(hs.URL)
	if err := runPingEnv(context.Background(), []string{"nightly", "--status", "run"}, env.ingestEnv); err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(env.clock.slept()) != 1 {
		t.Fatalf("%d calls, slept %v", calls, env.clock.slept())
	}
}
