// Package controltest runs control-plane APIs on loopback for tests: the real
// handlers over a real state.Store in a temporary directory, with a Cluster
// that applies commands straight to that store. That Cluster is the only
// fake; raft itself is tested in the cluster package.
package controltest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/protobuf/proto"

	"lookout/cluster/clusterapi"
	"lookout/control/admin"
	"lookout/control/alert/channel"
	"lookout/control/alert/channel/channeltest"
	"lookout/control/alert/channelregistry"
	"lookout/control/state"
	"lookout/internal/apikey"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Token is the operator token of every test server.
const Token = "test-admin-token"

// Cluster applies commands directly to a store, with increasing indexes and
// the time of its clock stamped as a leader would. Errors can be injected.
type Cluster struct {
	store *state.Store
	now   func() time.Time

	mu       sync.Mutex
	index    uint64
	before   func(*raftv1.Command)
	applyErr error
	readErr  error
	reads    int
	status   clusterapi.Status
}

// NewCluster returns a single-node Cluster over store.
func NewCluster(store *state.Store, now func() time.Time) *Cluster {
	return &Cluster{
		store: store,
		now:   now,
		index: store.AppliedIndex(),
		status: clusterapi.Status{Leader: "node-1", Nodes: []clusterapi.ServerStatus{{
			ID: "node-1", HTTPAddr: "127.0.0.1:8080", RaftAddr: "127.0.0.1:8081",
			Role: "leader", Voter: true, AppliedIndex: store.AppliedIndex(),
		}}},
	}
}

// Apply fills in the envelope as the real node does and applies cmd.
func (c *Cluster) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	c.mu.Lock()
	before := c.before
	c.mu.Unlock()
	if before != nil {
		before(cmd)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.applyErr != nil {
		return nil, c.applyErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	if cmd.Version == 0 {
		cmd.Version = state.CommandVersion
	}
	if cmd.RequestId == "" {
		cmd.RequestId = uuid.NewString()
	}
	cmd.TimeUnixMs = c.now().UnixMilli()
	c.index++
	return c.store.ApplyBatch([]state.Entry{{Index: c.index, Command: cmd}})[0], nil
}

// BeforeApply sets a function that Apply calls with each command before
// applying it (nil: none). It runs outside the Cluster's lock, so it may
// apply commands of its own, which it is called with too.
func (c *Cluster) BeforeApply(f func(cmd *raftv1.Command)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.before = f
}

// OvertakePutMonitors makes every PutMonitors lose a race until undo is
// called: just before it is applied, the names it creates are taken (by
// monitors of the same kind with another timeout) and the monitors it
// updates are deleted, as concurrent requests could have done.
func (c *Cluster) OvertakePutMonitors() (undo func()) {
	var mu sync.Mutex
	mine := map[string]bool{} // request ids of the commands made here
	c.BeforeApply(func(cmd *raftv1.Command) {
		put := cmd.GetPutMonitors()
		mu.Lock()
		skip := put == nil || mine[cmd.GetRequestId()]
		mu.Unlock()
		if skip {
			return
		}
		var race []*raftv1.Command
		for _, s := range put.GetCreates() {
			taken := proto.Clone(s).(*raftv1.MonitorSpec)
			taken.Uuid, taken.TimeoutSeconds = uuid.NewString(), s.GetTimeoutSeconds()+1
			race = append(race, &raftv1.Command{Op: &raftv1.Command_PutMonitors{PutMonitors: &raftv1.PutMonitors{
				AccountId: put.GetAccountId(), Creates: []*raftv1.MonitorSpec{taken}}}})
		}
		for _, s := range put.GetUpdates() {
			race = append(race, &raftv1.Command{Op: &raftv1.Command_DeleteMonitor{DeleteMonitor: &raftv1.DeleteMonitor{
				AccountId: put.GetAccountId(), MonitorUuid: s.GetUuid()}}})
		}
		for _, r := range race {
			r.RequestId = uuid.NewString()
			mu.Lock()
			mine[r.RequestId] = true
			mu.Unlock()
			c.Apply(context.Background(), r)
		}
	})
	return func() { c.BeforeApply(nil) }
}

// ConsistentRead counts the call and returns the injected error, if any.
func (c *Cluster) ConsistentRead(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.readErr
}

// Restore loads the snapshot stream into the store, as the leader's raft
// restore does.
func (c *Cluster) Restore(ctx context.Context, r io.ReaderAt, size int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.store.Restore(io.NewSectionReader(r, 0, size)); err != nil {
		return err
	}
	c.index = max(c.index, c.store.AppliedIndex())
	return nil
}

// Status returns the status set by SetStatus (one leader node at first).
func (c *Cluster) Status(ctx context.Context) (clusterapi.Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, nil
}

// FailApply makes every Apply return err (nil: succeed again).
func (c *Cluster) FailApply(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.applyErr = err
}

// FailReads makes every ConsistentRead return err (nil: succeed again).
func (c *Cluster) FailReads(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readErr = err
}

// Reads is how many times ConsistentRead was called.
func (c *Cluster) Reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads
}

// SetStatus sets what Status returns.
func (c *Cluster) SetStatus(st clusterapi.Status) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = st
}

// Channels is every alert channel as an operator would have them, with an
// SMTP server set (nothing is sent unless a test asks a channel to), and
// private targets allowed (lookout control --allow-private-targets), since
// the receivers of tests are on loopback.
func Channels() *channel.Registry {
	return channelregistry.New(channel.Deps{
		SMTP: channel.SMTPSettings{Addr: "127.0.0.1:25", From: "alerts@example.com"},
		HTTP: channeltest.HTTP(),
	})
}

// Server is the operator API served on loopback.
type Server struct {
	// URL is the base URL, without a trailing slash.
	URL     string
	Store   *state.Store
	Cluster *Cluster
	API     *admin.API
	// Now is the fixed time of the server's clock.
	Now time.Time
}

// OpenStore opens a state with small Badger options in a temporary
// directory; it is closed when the test ends.
func OpenStore(t testing.TB) *state.Store {
	t.Helper()
	store, err := state.Open(state.Options{Dir: t.TempDir(), Small: true, Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatalf("open state: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// MustApply applies cmd and fails the test unless the state machine
// answers OK.
func (c *Cluster) MustApply(t testing.TB, cmd *raftv1.Command) {
	t.Helper()
	if res, err := c.Apply(context.Background(), cmd); err != nil || res.GetStatus() != raftv1.Status_STATUS_OK {
		t.Fatalf("apply %T: %v %v", cmd.GetOp(), res, err)
	}
}

// MarkKeyUsed records that the key whose secret is given was used at the
// server's time, as the Management API does on its first request: a test
// that counts what requests write starts from there.
func (s *Server) MarkKeyUsed(t testing.TB, secret string) {
	t.Helper()
	key, err := s.Store.KeyByHash(apikey.Hash(secret))
	if err != nil {
		t.Fatalf("mark key used: %v", err)
	}
	s.Cluster.MustApply(t, &raftv1.Command{Op: &raftv1.Command_RecordKeyUsed{RecordKeyUsed: &raftv1.RecordKeyUsed{
		AccountId: key.GetAccountId(), KeyId: key.GetId(),
	}}})
}

// NewServer starts the operator API; it stops when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	store := OpenStore(t)
	now := time.Date(2026, time.March, 15, 12, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := NewCluster(store, clock)
	api := admin.New(admin.Options{Cluster: c, State: store, Token: Token, Now: clock, Channels: Channels(), PasswordCost: bcrypt.MinCost})
	mux := http.NewServeMux()
	api.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &Server{URL: srv.URL, Store: store, Cluster: c, API: api, Now: now}
}
