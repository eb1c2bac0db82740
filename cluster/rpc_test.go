package cluster

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/hashicorp/raft"

	clusterv1 "lookout/internal/gen/lookout/cluster/v1"
	"lookout/internal/gen/lookout/cluster/v1/clusterv1connect"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// leaderStub is a leader's ClusterService whose Apply does what fail says.
type leaderStub struct {
	clusterv1connect.UnimplementedClusterServiceHandler
	fail func() error
}

func (l *leaderStub) Apply(context.Context, *connect.Request[clusterv1.ApplyRequest]) (*connect.Response[clusterv1.ApplyResponse], error) {
	return nil, l.fail()
}

// serveStub serves l over h2c on loopback, as a node does.
func serveStub(t *testing.T, l *leaderStub) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(clusterv1connect.NewClusterServiceHandler(l))
	srv := &http.Server{Handler: mux, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A forwarded write whose connection breaks before the leader answers
// (the leader was killed) is retried like a missing leader: its request
// id makes that safe. An error the leader itself answered is not.
func TestForwardCutOffIsRetriedButALeadersErrorIsNot(t *testing.T) {
	l := &leaderStub{}
	addr := serveStub(t, l)
	rpc := newRPCClients((&net.Dialer{}).DialContext, "token", nil)
	defer rpc.tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := &raftv1.Command{RequestId: "r1"}

	l.fail = func() error { panic(http.ErrAbortHandler) } // the connection's end, no answer
	if _, err := rpc.apply(ctx, addr, cmd); !retryable(err) {
		t.Errorf("a forward cut off before the answer: %v (%s, wire %v), want retryable", err, connect.CodeOf(err), connect.IsWireError(errors.Unwrap(err)))
	}
	l.fail = func() error { return connect.NewError(connect.CodeInternal, errors.New("disk on fire")) }
	if _, err := rpc.apply(ctx, addr, cmd); err == nil || retryable(err) {
		t.Errorf("the leader's own internal error: %v, want it final", err)
	}
}

// A write forwarded to a leader that went silent (a killed machine answers
// nothing) is given up as soon as raft names another leader, not after
// its timeout; naming the same leader again, or none, keeps it waiting.
func TestForwardToASilentLeaderEndsWhenAnotherIsNamed(t *testing.T) {
	l := &leaderStub{}
	held := make(chan struct{})
	l.fail = func() error { <-held; return connect.NewError(connect.CodeUnavailable, errors.New("released")) }
	defer close(held)
	addr := serveStub(t, l)
	rpc := newRPCClients((&net.Dialer{}).DialContext, "token", nil)
	defer rpc.tr.CloseIdleConnections()

	var mu sync.Mutex
	leader := raft.ServerID("old")
	w := newLeaderWatch()
	current := func() raft.ServerID { mu.Lock(); defer mu.Unlock(); return leader }
	name := func(id raft.ServerID) { mu.Lock(); leader = id; mu.Unlock(); w.named() }
	ctx, cancel := forwardCtx(context.Background(), w, current, "old")
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := rpc.apply(ctx, addr, &raftv1.Command{RequestId: "r1"})
		done <- err
	}()

	name("old")
	name("")
	select {
	case err := <-done:
		t.Fatalf("the forward ended while raft named the same leader or none: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	name("new")
	select {
	case err := <-done:
		if !retryable(err) {
			t.Fatalf("a forward given up for a new leader: %v, want retryable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the forward still waits on the silent leader after raft named another")
	}
}
