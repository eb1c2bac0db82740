package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/control/alert/channel"
	"lookout/control/alert/channel/webhook"
	"lookout/control/controltest"
	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

const (
	acct   = "acct-1"
	secret = "whsec_" + "dGVzdC1zaWduaW5nLWtleQ==" // base64("test-signing-key")
)

// env is a real state store written through controltest's Cluster, on a
// clock the test moves.
type env struct {
	t       *testing.T
	store   *state.Store
	cluster *controltest.Cluster
	clock   atomic.Int64 // unix ms
}

func newEnv(t *testing.T) *env {
	t.Helper()
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatalf("open state: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	e := &env{t: t, store: store}
	e.clock.Store(time.Now().UnixMilli())
	e.cluster = controltest.NewCluster(store, e.now)
	e.account(acct)
	return e
}

// account creates account id.
func (e *env) account(id string) {
	e.t.Helper()
	key := func(kid string, typ raftv1.KeyType) *raftv1.Key {
		return &raftv1.Key{Id: kid + "-" + id, AccountId: id, Type: typ, Name: kid, Hash: []byte("hash-" + kid + "-" + id)}
	}
	e.apply(&raftv1.Command{Op: &raftv1.Command_CreateAccount{CreateAccount: &raftv1.CreateAccount{
		// Tests raise many alerts at once: no cap on the monitors pings create.
		AccountId: id, Email: "ops@" + id + ".example.com", Plan: &raftv1.Plan{Name: "free", IngestRatePerSecond: 5, IngestBurst: 10, MonitorsCreatedPerMinute: proto.Int64(state.MaxMonitorsCreatedPerMinute)},
		IngestKey: key("ik", raftv1.KeyType_KEY_TYPE_INGEST), ManagementKey: key("mk", raftv1.KeyType_KEY_TYPE_MANAGEMENT),
	}}})
}

func (e *env) now() time.Time { return time.UnixMilli(e.clock.Load()) }

func (e *env) advance(d time.Duration) { e.clock.Add(d.Milliseconds()) }

func (e *env) apply(cmd *raftv1.Command) *raftv1.Result {
	e.t.Helper()
	res, err := e.cluster.Apply(context.Background(), cmd)
	if err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		e.t.Fatalf("apply %T: %v %v", cmd.GetOp(), res, err)
	}
	return res
}

// defaultChannel adds a default channel of the account.
func (e *env) defaultChannel(id, typ string, config []byte) {
	e.defaultChannelOf(acct, id, typ, config)
}

// defaultChannelOf adds a default channel of account.
func (e *env) defaultChannelOf(account, id, typ string, config []byte) {
	e.apply(&raftv1.Command{Op: &raftv1.Command_CreateChannel{CreateChannel: &raftv1.CreateChannel{
		AccountId: account, ChannelId: id, Type: typ, Name: id, ConfigJson: config, IsDefault: true,
	}}})
}

// fail sends a fail ping of the ping monitor name (made by the ping when
// new) and returns the alert the state machine raised.
func (e *env) fail(name string) *statev1.Alert {
	e.t.Helper()
	return e.failIn(acct, name)
}

// failIn is fail in account.
func (e *env) failIn(account, name string) *statev1.Alert {
	e.t.Helper()
	before := e.pendingIDs()
	code := int64(3)
	e.apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: []*raftv1.Event{{
		AccountId: account, Monitor: name, EventType: "ping", Status: "fail", ExitCode: &code, Host: "worker-1",
		Message: "disk full", ReceivedUnixMs: e.now().UnixMilli(),
	}}}}})
	pending, err := e.store.PendingAlerts(0)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, a := range pending {
		if !before[a.GetId()] {
			return a
		}
	}
	e.t.Fatalf("no alert raised for %s (pending: %v)", name, pending)
	return nil
}

func (e *env) pendingIDs() map[string]bool {
	pending, err := e.store.PendingAlerts(0)
	if err != nil {
		e.t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, a := range pending {
		ids[a.GetId()] = true
	}
	return ids
}

// delivery is the stored delivery ref of alert id.
func (e *env) delivery(id, ref string) *statev1.Delivery {
	e.t.Helper()
	a, err := e.store.Alert(id)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range a.GetDeliveries() {
		if d.GetChannelRef() == ref {
			return d
		}
	}
	e.t.Fatalf("alert %s has no delivery %s: %v", id, ref, a.GetDeliveries())
	return nil
}

// dispatcher makes a dispatcher over the env (o's Cluster, State,
// Channels, Now, Interval and Logger filled in when unset).
func (e *env) dispatcher(o DispatcherOptions) *Dispatcher {
	if o.Cluster == nil {
		o.Cluster = e.cluster
	}
	o.State = e.store
	if o.Channels == nil {
		// A client without a timeout of its own (SendTimeout bounds a try)
		// that reaches the receivers on loopback.
		deps := channel.Deps{HTTP: &http.Client{}}
		o.Channels = ChannelsFunc(channel.NewRegistry(map[string]channel.Factory{webhook.Type: webhook.New}, deps).New)
	}
	if o.Now == nil {
		o.Now = e.now
	}
	if o.Interval == 0 {
		o.Interval = 5 * time.Millisecond
	}
	o.Logger = hclog.New(&hclog.LoggerOptions{Output: testWriter{e.t}, Level: hclog.Debug})
	return NewDispatcher(o)
}

// start runs a dispatcher over the env (see dispatcher) until the
// returned stop is called (or the test ends).
func (e *env) start(o DispatcherOptions) (stop func()) {
	d := e.dispatcher(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	e.t.Cleanup(stop)
	return stop
}

// failMany sends a fail ping of n new ping monitors prefix-<i>, a batch
// of at most 256 per entry, raising n alerts.
func (e *env) failMany(prefix string, n int) {
	e.t.Helper()
	for i := 0; i < n; {
		var evs []*raftv1.Event
		for ; i < n && len(evs) < 256; i++ {
			evs = append(evs, &raftv1.Event{AccountId: acct, Monitor: fmt.Sprint(prefix, "-", i), EventType: "ping", Status: "fail", ReceivedUnixMs: e.now().UnixMilli()})
		}
		res := e.apply(&raftv1.Command{Op: &raftv1.Command_IngestBatch{IngestBatch: &raftv1.IngestBatch{RetentionCount: 100, Events: evs}}})
		for _, r := range res.GetEvents() {
			if r.GetOutcome() != raftv1.EventOutcome_EVENT_OUTCOME_STORED {
				e.t.Fatalf("a fail ping of %s was not stored: %v", prefix, r.GetOutcome())
			}
		}
	}
}

// waitFor polls cond for up to 10 s.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(end) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// settle lets a running dispatcher make a few more passes.
func settle() { time.Sleep(50 * time.Millisecond) }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// receiver is a webhook receiver answering the statuses of its script in
// turn, then 200.
type receiver struct {
	t   *testing.T
	srv *httptest.Server

	mu     sync.Mutex
	script []int
	got    []webhook.Payload
	// hold, when set, makes the next request wait until the sender gives
	// up (the request context ends).
	hold bool
	held chan struct{}
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{t: t, script: script, held: make(chan struct{}, 1)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := webhook.Verify(secret, req.Header, body); err != nil {
		r.t.Errorf("receiver: %v", err)
	}
	var p webhook.Payload
	if err := json.Unmarshal(body, &p); err != nil || p.ID != req.Header.Get("webhook-id") {
		r.t.Errorf("receiver: body %s (%v), webhook-id %q", body, err, req.Header.Get("webhook-id"))
	}
	r.mu.Lock()
	r.got = append(r.got, p)
	hold := r.hold
	r.hold = false
	status := http.StatusOK
	if len(r.script) > 0 {
		status, r.script = r.script[0], r.script[1:]
	}
	r.mu.Unlock()
	if hold {
		r.held <- struct{}{}
		<-req.Context().Done()
		return
	}
	w.WriteHeader(status)
}

// config is the webhook channel config that reaches r.
func (r *receiver) config() []byte {
	b, _ := json.Marshal(map[string]string{"url": r.srv.URL, "secret": secret})
	return b
}

// ids are the alert ids of the requests received, in order.
func (r *receiver) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, p := range r.got {
		out = append(out, p.ID)
	}
	return out
}

func (r *receiver) count() int { return len(r.ids()) }

func (r *receiver) last() webhook.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[len(r.got)-1]
}

// groupChannels is a notification group's channels_json of webhooks.
func groupChannels(rs ...*receiver) []byte {
	type obj struct {
		Type   string          `json:"type"`
		Name   string          `json:"name"`
		Config json.RawMessage `json:"config"`
	}
	var out []obj
	for _, r := range rs {
		out = append(out, obj{Type: webhook.Type, Name: "hook", Config: r.config()})
	}
	b, _ := json.Marshal(out)
	return b
}
