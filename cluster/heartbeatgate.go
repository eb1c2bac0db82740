package cluster

import (
	"sync"

	"github.com/hashicorp/raft"
)

// gatedTransport is raft's network transport with a gate on its heartbeat
// fast path. Raft handles a heartbeat on the transport's connection
// goroutine, outside the goroutines its Shutdown waits for, so one that
// arrived just before a shutdown can still write the current term (a
// heartbeat of a newer term) after it; raft panics when that write fails
// on the closed stable store. Close shuts the gate, which waits for the
// heartbeats in flight and turns the later ones away, before it closes the
// stores.
type gatedTransport struct {
	*raft.NetworkTransport
	mu   sync.RWMutex
	shut bool
}

// SetHeartbeatHandler hands raft's handler to the transport behind the
// gate.
func (t *gatedTransport) SetHeartbeatHandler(cb func(rpc raft.RPC)) {
	if cb == nil {
		t.NetworkTransport.SetHeartbeatHandler(nil)
		return
	}
	t.NetworkTransport.SetHeartbeatHandler(func(rpc raft.RPC) {
		t.mu.RLock()
		defer t.mu.RUnlock()
		if t.shut {
			rpc.Respond(nil, raft.ErrRaftShutdown)
			return
		}
		cb(rpc)
	})
}

// shutHeartbeats waits for the heartbeats being handled; raft sees none
// after it.
func (t *gatedTransport) shutHeartbeats() {
	t.mu.Lock()
	t.shut = true
	t.mu.Unlock()
}
