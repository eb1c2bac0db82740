// Package agenttest holds test doubles at the agent's edges: a fake
// control plane serving AgentService over real HTTP/2 (h2c, httptest),
// and an in-memory buffer. They are for tests only.
package agenttest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"lookout/internal/agentident"
	agentv1 "lookout/internal/gen/lookout/agent/v1"
	"lookout/internal/gen/lookout/agent/v1/agentv1connect"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// ControlPlane is a fake of the control plane's AgentService: it holds a
// region's checks and keys, streams them as deltas, stores reported
// executions and forwarded events (each id once), and can be made to
// fail or to refuse the token.
type ControlPlane struct {
	Region string

	srv *httptest.Server

	mu        sync.Mutex
	token     string
	revoked   bool
	failCalls int // unary calls still to fail with Unavailable
	checks    map[string]*agentv1.Check
	keys      map[string]*agentv1.IngestKey
	events    []*raftv1.Event
	eventIDs  map[string]bool
	execs     []*raftv1.Execution
	execIDs   map[string]bool
	refuse    map[string]raftv1.EventOutcome // by event_id
	heartbeat []*agentv1.HeartbeatRequest
	requests  []*agentv1.AssignmentsRequest
	calls     map[string]int
	changed   chan struct{} // closed and replaced on every change
	clientCN  string
	gossipKey []byte // sent with the first message, as tokenID
	tokenID   string
}

// SetGossip makes the first message of every stream from now on carry the
// region's gossip key and the token's id.
func (cp *ControlPlane) SetGossip(key []byte, tokenID string) {
	cp.mu.Lock()
	cp.gossipKey, cp.tokenID = key, tokenID
	cp.mu.Unlock()
}

// ClientCertCN is the common name of the last client certificate seen.
func (cp *ControlPlane) ClientCertCN() string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.clientCN
}

// NewControlPlane starts a fake control plane on loopback (h2c) that
// accepts token; it is closed when the test ends.
func NewControlPlane(t testing.TB, region, token string) *ControlPlane {
	return newControlPlane(t, region, token, false)
}

func newControlPlane(t testing.TB, region, token string, useTLS bool) *ControlPlane {
	cp := &ControlPlane{
		Region: region, token: token,
		checks: map[string]*agentv1.Check{}, keys: map[string]*agentv1.IngestKey{},
		eventIDs: map[string]bool{}, execIDs: map[string]bool{}, refuse: map[string]raftv1.EventOutcome{},
		calls: map[string]int{}, changed: make(chan struct{}),
	}
	path, h := agentv1connect.NewAgentServiceHandler(cp)
	mux := http.NewServeMux()
	mux.Handle(path, h)
	cp.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			cp.mu.Lock()
			cp.clientCN = r.TLS.PeerCertificates[0].Subject.CommonName
			cp.mu.Unlock()
		}
		if r.ProtoMajor != 2 {
			http.Error(w, "the agent RPC is HTTP/2 only", http.StatusHTTPVersionNotSupported)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	cp.srv.Config.Protocols = new(http.Protocols)
	cp.srv.Config.Protocols.SetHTTP1(true)
	if useTLS {
		cp.srv.EnableHTTP2 = true
		cp.srv.Config.Protocols.SetHTTP2(true)
		cp.srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
		cp.srv.StartTLS()
	} else {
		cp.srv.Config.Protocols.SetUnencryptedHTTP2(true)
		cp.srv.Start()
	}
	t.Cleanup(cp.Close)
	return cp
}

// NewControlPlaneTLS is NewControlPlane serving HTTPS (HTTP/2 by ALPN)
// with a test certificate; Roots verifies it. It asks for a client
// certificate and records the one it gets (ClientCertCN).
func NewControlPlaneTLS(t testing.TB, region, token string) *ControlPlane {
	return newControlPlane(t, region, token, true)
}

// Roots is the pool that verifies a TLS fake's certificate.
func (cp *ControlPlane) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(cp.srv.Certificate())
	return pool
}

// URL is the fake's base URL.
func (cp *ControlPlane) URL() string { return cp.srv.URL }

// Close stops the fake (open streams end).
func (cp *ControlPlane) Close() {
	cp.srv.CloseClientConnections()
	cp.srv.Close()
}

// Revoke refuses the token from now on; open streams end
// UNAUTHENTICATED at once.
func (cp *ControlPlane) Revoke() {
	cp.mu.Lock()
	cp.revoked = true
	cp.notify()
	cp.mu.Unlock()
}

// SetToken accepts a new token (and no longer the old one).
func (cp *ControlPlane) SetToken(token string) {
	cp.mu.Lock()
	cp.token, cp.revoked = token, false
	cp.mu.Unlock()
}

// FailCalls makes the next n unary calls fail with UNAVAILABLE.
func (cp *ControlPlane) FailCalls(n int) {
	cp.mu.Lock()
	cp.failCalls = n
	cp.mu.Unlock()
}

// Refuse makes the event with this id get outcome instead of stored.
func (cp *ControlPlane) Refuse(eventID string, outcome raftv1.EventOutcome) {
	cp.mu.Lock()
	cp.refuse[eventID] = outcome
	cp.mu.Unlock()
}

// PutCheck adds or replaces a check (its version is bumped) and streams it.
func (cp *ControlPlane) PutCheck(c *agentv1.Check) {
	cp.mu.Lock()
	c = proto.Clone(c).(*agentv1.Check)
	if old := cp.checks[c.GetId()]; old != nil && c.GetVersion() <= old.GetVersion() {
		c.Version = old.GetVersion() + 1
	}
	if c.Version == 0 {
		c.Version = 1
	}
	cp.checks[c.GetId()] = c
	cp.notify()
	cp.mu.Unlock()
}

// RemoveCheck removes a check.
func (cp *ControlPlane) RemoveCheck(id string) {
	cp.mu.Lock()
	delete(cp.checks, id)
	cp.notify()
	cp.mu.Unlock()
}

// PutKey adds or replaces an ingest key.
func (cp *ControlPlane) PutKey(k *agentv1.IngestKey) {
	cp.mu.Lock()
	k = proto.Clone(k).(*agentv1.IngestKey)
	if old := cp.keys[k.GetId()]; old != nil && k.GetVersion() <= old.GetVersion() {
		k.Version = old.GetVersion() + 1
	}
	if k.Version == 0 {
		k.Version = 1
	}
	cp.keys[k.GetId()] = k
	cp.notify()
	cp.mu.Unlock()
}

// RemoveKey removes an ingest key.
func (cp *ControlPlane) RemoveKey(id string) {
	cp.mu.Lock()
	delete(cp.keys, id)
	cp.notify()
	cp.mu.Unlock()
}

// Events returns the events stored, in order.
func (cp *ControlPlane) Events() []*raftv1.Event {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return slices.Clone(cp.events)
}

// Executions returns the executions stored, in order.
func (cp *ControlPlane) Executions() []*raftv1.Execution {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return slices.Clone(cp.execs)
}

// Heartbeats returns the heartbeats received.
func (cp *ControlPlane) Heartbeats() []*agentv1.HeartbeatRequest {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return slices.Clone(cp.heartbeat)
}

// Requests returns the assignment requests received.
func (cp *ControlPlane) Requests() []*agentv1.AssignmentsRequest {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return slices.Clone(cp.requests)
}

// Calls returns how many calls of a procedure ("ForwardEvents", ...)
// were answered, refusals and failures included.
func (cp *ControlPlane) Calls(name string) int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.calls[name]
}

// notify wakes the open streams (mu held).
func (cp *ControlPlane) notify() {
	close(cp.changed)
	cp.changed = make(chan struct{})
}

// auth checks the token and counts the call (mu held).
func (cp *ControlPlane) auth(h http.Header, name string) error {
	cp.calls[name]++
	got, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok || got != cp.token || cp.revoked {
		return connect.NewError(connect.CodeUnauthenticated, errors.New("invalid agent token"))
	}
	return nil
}

// unary checks the token and the injected failures (mu held).
func (cp *ControlPlane) unary(h http.Header, name string) error {
	if err := cp.auth(h, name); err != nil {
		return err
	}
	if cp.failCalls > 0 {
		cp.failCalls--
		return connect.NewError(connect.CodeUnavailable, errors.New("injected failure"))
	}
	return nil
}

// checkIdentity refuses a malformed agent identity as the control plane
// does: INVALID_ARGUMENT.
func checkIdentity(a *agentv1.AgentIdentity) error {
	if err := agentident.Check(a.GetId(), a.GetName(), a.GetVersion()); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	return nil
}

// Assignments implements AgentService: the difference against what the
// agent holds (synced), then every change, and keepalives.
func (cp *ControlPlane) Assignments(ctx context.Context, req *connect.Request[agentv1.AssignmentsRequest], st *connect.ServerStream[agentv1.AssignmentsResponse]) error {
	cp.mu.Lock()
	if err := cp.auth(req.Header(), "Assignments"); err != nil {
		cp.mu.Unlock()
		return err
	}
	if err := checkIdentity(req.Msg.GetAgent()); err != nil {
		cp.mu.Unlock()
		return err
	}
	cp.requests = append(cp.requests, proto.Clone(req.Msg).(*agentv1.AssignmentsRequest))
	heldChecks, heldKeys := map[string]uint64{}, map[string]uint64{}
	for _, h := range req.Msg.GetChecks() {
		heldChecks[h.GetId()] = h.GetVersion()
	}
	for _, h := range req.Msg.GetKeys() {
		heldKeys[h.GetId()] = h.GetVersion()
	}
	first := true
	for {
		m := &agentv1.AssignmentsResponse{ServerUnixMs: time.Now().UnixMilli()}
		for id, c := range cp.checks {
			if v, ok := heldChecks[id]; !ok || v != c.GetVersion() {
				m.Checks = append(m.Checks, c)
				heldChecks[id] = c.GetVersion()
			}
		}
		for id := range heldChecks {
			if cp.checks[id] == nil {
				m.RemovedChecks = append(m.RemovedChecks, id)
				delete(heldChecks, id)
			}
		}
		for id, k := range cp.keys {
			if v, ok := heldKeys[id]; !ok || v != k.GetVersion() {
				m.Keys = append(m.Keys, k)
				heldKeys[id] = k.GetVersion()
			}
		}
		for id := range heldKeys {
			if cp.keys[id] == nil {
				m.RemovedKeys = append(m.RemovedKeys, id)
				delete(heldKeys, id)
			}
		}
		if first {
			m.Synced, m.Region, m.GossipKey, m.TokenId = true, cp.Region, cp.gossipKey, cp.tokenID
		}
		changed := cp.changed
		revoked := cp.revoked
		cp.mu.Unlock()
		if revoked {
			return connect.NewError(connect.CodeUnauthenticated, errors.New("the agent token was revoked"))
		}
		if first || len(m.Checks)+len(m.RemovedChecks)+len(m.Keys)+len(m.RemovedKeys) > 0 {
			if err := st.Send(m); err != nil {
				return err
			}
		}
		first = false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-time.After(15 * time.Second):
			if err := st.Send(&agentv1.AssignmentsResponse{ServerUnixMs: time.Now().UnixMilli()}); err != nil {
				return err
			}
		}
		cp.mu.Lock()
	}
}

// ReportExecutions implements AgentService: each (check, region, slot)
// stored once; an execution of an unknown check is refused.
func (cp *ControlPlane) ReportExecutions(_ context.Context, req *connect.Request[agentv1.ReportExecutionsRequest]) (*connect.Response[agentv1.ReportExecutionsResponse], error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if err := cp.unary(req.Header(), "ReportExecutions"); err != nil {
		return nil, err
	}
	out := &agentv1.ReportExecutionsResponse{}
	for _, ex := range req.Msg.GetExecutions() {
		if cp.checks[ex.GetCheckUuid()] == nil {
			out.Results = append(out.Results, &agentv1.ExecutionResult{Error: "check_not_found"})
			continue
		}
		ex = proto.Clone(ex).(*raftv1.Execution)
		ex.Region, ex.Agent = cp.Region, req.Msg.GetAgent().GetName()
		id := ex.GetCheckUuid() + "/" + ex.GetRegion() + "/" + time.UnixMilli(ex.GetSlotUnixMs()).String()
		if !cp.execIDs[id] {
			cp.execIDs[id] = true
			cp.execs = append(cp.execs, ex)
		}
		out.Results = append(out.Results, &agentv1.ExecutionResult{Stored: true})
	}
	return connect.NewResponse(out), nil
}

// ForwardEvents implements AgentService: each event_id stored once, a
// quota with every result.
func (cp *ControlPlane) ForwardEvents(_ context.Context, req *connect.Request[agentv1.ForwardEventsRequest]) (*connect.Response[agentv1.ForwardEventsResponse], error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if err := cp.unary(req.Header(), "ForwardEvents"); err != nil {
		return nil, err
	}
	out := &agentv1.ForwardEventsResponse{}
	for _, ev := range req.Msg.GetEvents() {
		r := &raftv1.EventResult{Outcome: raftv1.EventOutcome_EVENT_OUTCOME_STORED}
		switch {
		case cp.refuse[ev.GetEventId()] != 0:
			r.Outcome = cp.refuse[ev.GetEventId()]
		case cp.eventIDs[ev.GetEventId()]:
			r.Outcome = raftv1.EventOutcome_EVENT_OUTCOME_DUPLICATE
		default:
			cp.eventIDs[ev.GetEventId()] = true
			ev = proto.Clone(ev).(*raftv1.Event)
			ev.Region = cp.Region
			cp.events = append(cp.events, ev)
		}
		r.Quota = &raftv1.QuotaStatus{State: "ok", Used: int64(len(cp.events))}
		out.Results = append(out.Results, r)
	}
	return connect.NewResponse(out), nil
}

// Heartbeat implements AgentService.
func (cp *ControlPlane) Heartbeat(_ context.Context, req *connect.Request[agentv1.HeartbeatRequest]) (*connect.Response[agentv1.HeartbeatResponse], error) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if err := cp.unary(req.Header(), "Heartbeat"); err != nil {
		return nil, err
	}
	if err := checkIdentity(req.Msg.GetAgent()); err != nil {
		return nil, err
	}
	cp.heartbeat = append(cp.heartbeat, proto.Clone(req.Msg).(*agentv1.HeartbeatRequest))
	return connect.NewResponse(&agentv1.HeartbeatResponse{ServerUnixMs: time.Now().UnixMilli()}), nil
}
