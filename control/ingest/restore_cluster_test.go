package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/internal/apikey"
)

// TestFollowerInstallingSnapshotsKeepsServing: a follower installs a
// snapshot 20 times (each an operator restore on the leader, which every
// follower installs) while requests keep reading its state and pinging
// through it: every read finds the account, its key and its monitors,
// every ping is answered 200, and no node crashes.
func TestFollowerInstallingSnapshotsKeepsServing(t *testing.T) {
	t.Parallel()
	c, acct, key := newIngestCluster(t)
	leader := c.Leader(5 * time.Second)
	monitors := []string{"keep", "m1", "m2", "m3"}
	for i, name := range monitors {
		if ok, err := ping(clustertest.Context(t, 10*time.Second), http.DefaultClient, leader.URL(), key, name, fmt.Sprint("setup-", i)); err != nil || !ok {
			t.Fatalf("ping %s: %v %v", name, ok, err)
		}
	}
	// The state every restore brings back.
	if err := leader.ConsistentRead(clustertest.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	snap, err := leader.State().Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	_, err = snap.WriteTo(&stream)
	snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	f := c.Follower()
	c.WaitConverged(20 * time.Second)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		wg           sync.WaitGroup
		reads, pings atomic.Int64
		errMu        sync.Mutex
		errs         []error
	)
	fail := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(errs) < 10 {
			errs = append(errs, err)
		}
	}
	keyHash := apikey.Hash(key)
	for range 3 { // reads of the follower's state, as its APIs do
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := f.State()
			for ctx.Err() == nil {
				if _, err := st.Account(acct); err != nil {
					fail(fmt.Errorf("account: %w", err))
				}
				if _, err := st.KeyByHash(keyHash); err != nil {
					fail(fmt.Errorf("ingest key: %w", err))
				}
				for _, name := range monitors {
					if _, err := st.MonitorByName(acct, "ping", name); err != nil {
						fail(fmt.Errorf("monitor %s: %w", name, err))
					}
				}
				reads.Add(1)
				time.Sleep(time.Millisecond) // leave the CPU to raft's heartbeats
			}
		}()
	}
	for w := range 3 { // pings through the follower
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				status, body, err := pingAnswer(ctx, f.URL(), key, monitors[(w+i)%len(monitors)], fmt.Sprintf("w%d-%d", w, i))
				switch {
				case ctx.Err() != nil:
				case err != nil:
					fail(fmt.Errorf("ping: %w", err))
				case status != http.StatusOK:
					fail(fmt.Errorf("ping answered %d %s", status, body))
				default:
					pings.Add(1)
				}
			}
		}()
	}

	snapIndex := func(n *clustertest.Node) uint64 {
		idx, _ := strconv.ParseUint(n.RaftStats()["last_snapshot_index"], 10, 64)
		return idx
	}
	for round := range 20 {
		// On a busy machine leadership may move: restore through the
		// leader of the moment.
		deadline := time.Now().Add(60 * time.Second)
		for {
			leader = c.Leader(30 * time.Second)
			err := leader.Restore(clustertest.Context(t, 30*time.Second), bytes.NewReader(stream.Bytes()), int64(stream.Len()))
			if err == nil {
				break
			}
			if !errors.Is(err, cluster.ErrNoLeader) || time.Now().After(deadline) {
				t.Fatalf("restore %d: %v", round, err)
			}
		}
		want := snapIndex(leader)
		deadline = time.Now().Add(20 * time.Second)
		for snapIndex(f) < want {
			if time.Now().After(deadline) {
				t.Fatalf("restore %d: the follower did not install snapshot %d (it has %d)", round, want, snapIndex(f))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	cancel()
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	t.Logf("%d reads, %d pings through the follower during 20 snapshot installs", reads.Load(), pings.Load())
	if reads.Load() == 0 || pings.Load() == 0 {
		t.Fatal("no request ran during the installs")
	}
	// Every node still serves, with the restored state.
	c.WaitConverged(20 * time.Second)
	for _, n := range c.Nodes {
		if _, err := n.State().MonitorByName(acct, "ping", "keep"); err != nil {
			t.Fatalf("%s: %v", n.ID(), err)
		}
	}
}

// pingAnswer posts one event and returns the answer's status and body.
func pingAnswer(ctx context.Context, base, key, monitor, eventID string) (int, string, error) {
	body := fmt.Sprintf(`{"event_type":"ping","monitor":%q,"status":"complete","event_id":%q}`, monitor, eventID)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/ping", bytes.NewBufferString(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	return resp.StatusCode, string(b), nil
}
