package cluster

import (
	"net"
	"strings"
	"testing"

	"lookout/control/state"
)

// TestNewFailsCleanlyWhenGossipCannotStart: a node whose gossip address is
// taken is an error from New, with what was started closed (before, the
// cleanup ran on the nil node New returns, and the process panicked).
func TestNewFailsCleanlyWhenGossipCannotStart(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	st, err := state.Open(state.Options{Dir: dir + "/state", Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n, err := New(Options{
		NodeID: "n1", DataDir: dir, State: st, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1",
		GossipAddr: taken.Addr().String(), Secret: []byte("0123456789abcdef0123456789abcdef"), Small: true,
	})
	if err == nil {
		n.Close()
		t.Fatal("New started a node whose gossip address is taken")
	}
	if n != nil {
		t.Fatalf("New returned a node with its error %v", err)
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Logf("error: %v", err)
	}
	// What New opened is closed: the raft log store can be opened again.
	n, err = New(Options{NodeID: "n1", DataDir: dir, State: st, RaftAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:1",
		Secret: []byte("0123456789abcdef0123456789abcdef"), Small: true})
	if err != nil {
		t.Fatalf("New on the same data dir after the failure: %v", err)
	}
	n.Close()
}
