package presence_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"lookout/cluster"
	"lookout/cluster/clustertest"
	"lookout/control/alert"
	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channelregistry"
	"lookout/control/engine"
	"lookout/control/presence"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// offlineAfter is the tests' --agent-offline-after.
const offlineAfter = 2 * time.Second

// hook is one webhook the receiver got.
type hook struct {
	ID, Type string
	Account  struct{ ID string } `json:"account"`
	Monitor  struct{ UUID, Name, Kind string }
	Region   *struct {
		Name     string
		Monitors int64
	}
}

// receiver is a real webhook receiver that keeps what it got.
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	hooks []hook
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var h hook
		if err := json.Unmarshal(body, &h); err != nil {
			t.Errorf("webhook body %s: %v", body, err)
		}
		r.mu.Lock()
		r.hooks = append(r.hooks, h)
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// distinct counts the different alert ids per "account type monitor".
func (r *receiver) distinct() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen, out := map[string]bool{}, map[string]int{}
	for _, h := range r.hooks {
		if !seen[h.ID] {
			seen[h.ID] = true
			out[h.Account.ID+" "+h.Type+" "+h.Monitor.Name]++
		}
	}
	return out
}

// regionHooks returns every agent alert once: a delivery whose record was
// not committed before a leader change is sent again (at least once, the
// same alert id), which is not a second alert.
func (r *receiver) regionHooks() []hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hook
	seen := map[string]bool{}
	for _, h := range r.hooks {
		if h.Region != nil && !seen[h.ID] {
			seen[h.ID] = true
			out = append(out, h)
		}
	}
	return out
}

// fixture is a 3-node cluster whose leaders run the alert dispatcher, the
// deadline engine and the region watcher as internal/cli wires them.
type fixture struct {
	t    *testing.T
	c    *clustertest.Cluster
	hook *receiver
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, hook: newReceiver(t)}
	registry := channelregistry.New(channel.Deps{HTTP: channeltest.HTTP()}) // receivers on loopback
	f.c = clustertest.NewCluster(t, 3, clustertest.Options{Tune: func(i int, o *cluster.Options) {
		o.LeaderTasks = []func(context.Context, *cluster.Node){func(ctx context.Context, n *cluster.Node) {
			st := clustertest.StateOf(n)
			d := alert.NewDispatcher(alert.DispatcherOptions{Cluster: n, State: st, Channels: alert.ChannelsFunc(registry.New)})
			w := presence.NewWatcher(presence.WatcherOptions{Cluster: n, State: st, OfflineAfter: offlineAfter, Tick: 100 * time.Millisecond})
			w.Refresh(ctx)
			e := engine.NewDeadlines(engine.DeadlineOptions{Cluster: n, State: st, OnAlerts: d.Notify, Held: w.Held, HeldChanged: w.HeldChanged()})
			var wg sync.WaitGroup
			wg.Add(3)
			go func() { defer wg.Done(); d.Run(ctx) }()
			go func() { defer wg.Done(); w.Run(ctx) }()
			go func() { defer wg.Done(); e.Run(ctx) }()
			wg.Wait()
		}}
	}})
	return f
}

func (f *fixture) apply(cmd *raftv1.Command) *raftv1.Result {
	f.t.Helper()
	res, err := f.c.Leader(20*time.Second).Apply(clustertest.Context(f.t, 20*time.Second), cmd)
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		f.t.Fatalf("apply %T: %v %v", cmd.GetOp(), res, err)
	}
	return res
}

// account makes an account with a default webhook channel to the
// receiver; it returns the account id and its ingest key id.
func (f *fixture) account(email string) (string, string) {
	acct, keyID := uuid.NewString(), uuid.NewString()
	_, ih, _ := apikey.New(apikey.Ingest)
	_, mh, _ := apikey.New(apikey.Management)
	f.apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: email, Plan: &raftv1.Plan{Name: "default", ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20},
		IngestKey:     &raftv1.Key{Id: keyID, AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "default", Hash: ih},
		ManagementKey: &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "personal", Hash: mh},
	}}})
	f.apply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: acct, ChannelId: uuid.NewString(), Type: "webhook", Name: "hook", IsDefault: true,
		ConfigJson: []byte(`{"url":"` + f.hook.URL + `","secret":"whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="}`),
	}}})
	return acct, keyID
}

// pingMonitors makes ping monitors expecting a ping every 60 s, no grace.
func (f *fixture) pingMonitors(acct string, names ...string) {
	interval, grace := int64(60), int64(0)
	put := &raftv1.PutMonitors{AccountId: acct}
	for _, n := range names {
		put.Creates = append(put.Creates, &raftv1.MonitorSpec{Uuid: uuid.NewString(), Kind: "ping", Name: n, Enabled: true,
			TimeoutSeconds: 3600, ExpectedIntervalSeconds: &interval, GraceSeconds: &grace})
	}
	f.apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: put}})
}

// ping is a complete ping of monitor at the event time at, through region
// (empty: a control node received it).
func ping(acct, key, monitor, region string, at time.Time) *raftv1.Event {
	ts := at.Unix()
	return &raftv1.Event{AccountId: acct, KeyId: key, Monitor: monitor, EventType: "ping", Status: "complete", Timestamp: &ts,
		ReceivedUnixMs: time.Now().UnixMilli(), Region: region, EventId: uuid.NewString()}
}

func (f *fixture) ingest(evs ...*raftv1.Event) {
	res := f.apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: evs}}})
	for i, r := range res.GetEvents() {
		if r.GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_STORED {
			f.t.Fatalf("event %d: %v", i, r)
		}
	}
}

// agent heartbeats through node's recorder every 100 ms until stop.
func (f *fixture) agent(n *cluster.Node, seen presence.Seen) (stop func()) {
	rec := presence.NewRecorder(presence.RecorderOptions{Cluster: n, MinInterval: offlineAfter / 4})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := rec.Seen(ctx, seen); err != nil && ctx.Err() == nil {
				f.t.Logf("heartbeat: %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (f *fixture) waitFor(what string, d time.Duration, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s; webhooks %v", what, f.hook.distinct())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// regionOffline reads the leader's state.
func (f *fixture) regionOffline(region string) bool {
	off, err := f.c.Leader(20 * time.Second).State().RegionOffline(region)
	if err != nil {
		f.t.Fatal(err)
	}
	return off
}

func key(acct, typ, monitor string) string { return fmt.Sprintf("%s %s %s", acct, typ, monitor) }
