package cluster

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"lookout/control/state"
)

// TestHeartbeatGateWaitsForHeartbeatsInFlight: shutting the gate waits for
// a heartbeat raft is handling (it may still write the current term), and
// a heartbeat after it never reaches raft's handler: the sender gets an
// error instead. Real transports on loopback.
func TestHeartbeatGateWaitsForHeartbeatsInFlight(t *testing.T) {
	tcp := func() *raft.NetworkTransport {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, 5*time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	sender, gate := tcp(), &gatedTransport{NetworkTransport: tcp()}
	entered, release := make(chan struct{}, 2), make(chan struct{})
	gate.SetHeartbeatHandler(func(rpc raft.RPC) {
		entered <- struct{}{}
		<-release
		rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: true}, nil)
	})
	heartbeat := func() error {
		req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, Addr: []byte(sender.LocalAddr())}, Term: 1}
		return sender.AppendEntries("gated", gate.LocalAddr(), req, new(raft.AppendEntriesResponse))
	}

	sent := make(chan error, 1)
	go func() { sent <- heartbeat() }()
	<-entered
	shut := make(chan struct{})
	go func() {
		gate.shutHeartbeats()
		close(shut)
	}()
	select {
	case <-shut:
		t.Fatal("the gate shut while a heartbeat was being handled")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-shut
	if err := <-sent; err != nil {
		t.Fatalf("the heartbeat in flight: %v", err)
	}

	if err := heartbeat(); err == nil {
		t.Error("a heartbeat after the gate shut was answered as handled")
	}
	select {
	case <-entered:
		t.Error("a heartbeat after the gate shut reached raft's handler")
	default:
	}
}

// TestCloseShutsTheHeartbeatGate: a node's Close shuts its transport's
// heartbeat gate, so no heartbeat reaches raft once the stores close.
func TestCloseShutsTheHeartbeatGate(t *testing.T) {
	dir := t.TempDir()
	st, err := state.Open(state.Options{Dir: dir + "/state", Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := New(Options{NodeID: "n1", DataDir: dir, State: st, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1",
		Secret: []byte("0123456789abcdef0123456789abcdef"), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	n.trans.mu.RLock()
	open := !n.trans.shut
	n.trans.mu.RUnlock()
	if !open {
		t.Fatal("the gate of a running node is shut")
	}
	n.Close()
	n.trans.mu.RLock()
	defer n.trans.mu.RUnlock()
	if !n.trans.shut {
		t.Error("Close left the heartbeat gate open")
	}
}
