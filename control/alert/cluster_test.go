package alert_test

import (
	"context"
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
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// TestDeadlineDuringLeaderKillDeliversOneAlert: a monitor's missed deadline
// passes while the leader is being killed; the new leader fires it and
// delivers exactly one alert id, within 5 s of its election.
func TestDeadlineDuringLeaderKillDeliversOneAlert(t *testing.T) {
	var (
		mu  sync.Mutex
		ids = map[string]int{}
		got = make(chan struct{}, 16)
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids[r.Header.Get("webhook-id")]++
		mu.Unlock()
		select {
		case got <- struct{}{}:
		default:
		}
	}))
	defer receiver.Close()
	registry := channelregistry.New(channel.Deps{HTTP: channeltest.HTTP()}) // receivers on loopback
	c := clustertest.NewCluster(t, 3, clustertest.Options{Tune: func(i int, o *cluster.Options) {
		o.LeaderTasks = []func(context.Context, *cluster.Node){func(ctx context.Context, n *cluster.Node) {
			d := alert.NewDispatcher(alert.DispatcherOptions{Cluster: n, State: clustertest.StateOf(n), Channels: alert.ChannelsFunc(registry.New)})
			e := engine.NewDeadlines(engine.DeadlineOptions{Cluster: n, State: clustertest.StateOf(n), OnAlerts: d.Notify})
			go d.Run(ctx)
			e.Run(ctx)
		}}
	}})
	apply := func(cmd *raftv1.Command) *raftv1.Result {
		t.Helper()
		res, err := c.Leader(10*time.Second).Apply(clustertest.Context(t, 10*time.Second), cmd)
		if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
			t.Fatalf("apply %T: %v %v", cmd.GetOp(), res, err)
		}
		return res
	}
	acct := uuid.NewString()
	_, ih, _ := apikey.New(apikey.Ingest)
	_, mh, _ := apikey.New(apikey.Management)
	apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		AccountId: acct, Email: "ops@example.com", Plan: &raftv1.Plan{Name: "default", ConfigAsCode: true, IngestRatePerSecond: 10, IngestBurst: 20},
		IngestKey:     &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_INGEST, Name: "default", Hash: ih},
		ManagementKey: &raftv1.Key{Id: uuid.NewString(), AccountId: acct, Type: raftv1.KeyType_KEY_TYPE_MANAGEMENT, Name: "personal", Hash: mh},
	}}})
	apply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: acct, ChannelId: uuid.NewString(), Type: "webhook", Name: "hook", IsDefault: true,
		ConfigJson: []byte(`{"url":"` + receiver.URL + `","secret":"whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="}`),
	}}})
	// A monitor expecting a ping every 4 s (below the API's bounds: the
	// state takes what the proposer validated).
	interval, grace := int64(4), int64(0)
	apply(&raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{AccountId: acct, Creates: []*raftv1.MonitorSpec{{
		Uuid: uuid.NewString(), Kind: "ping", Name: "job", Enabled: true, TimeoutSeconds: 3600, ExpectedIntervalSeconds: &interval, GraceSeconds: &grace,
	}}}}})
	pinged := time.Now()
	apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 10, Events: []*raftv1.Event{{
		AccountId: acct, Monitor: "job", EventType: "ping", Status: "complete", ReceivedUnixMs: pinged.UnixMilli(),
	}}}}})

	// Kill the leader just before the deadline: it passes with no leader.
	time.Sleep(time.Until(pinged.Add(4*time.Second - 300*time.Millisecond)))
	old := c.Leader(time.Second)
	c.Kill(old.Index)
	if _, err := c.WaitLeader(10*time.Second, c.Running()...); err != nil {
		t.Fatal(err)
	}
	elected := time.Now()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatalf("no alert delivered within 5 s of the new leader (%s after the deadline)", time.Since(pinged.Add(4*time.Second)).Round(time.Millisecond))
	}
	t.Logf("delivered %s after the new leader's election", time.Since(elected).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // any second, different alert would come by now
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 1 {
		t.Fatalf("%d different alert ids delivered, want exactly 1: %v", len(ids), ids)
	}
}
