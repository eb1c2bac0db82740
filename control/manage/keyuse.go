package manage

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// keyUseTimeout bounds the write that records a key's use; past it the
// request goes on, and the use is recorded by a later one.
const keyUseTimeout = 2 * time.Second

// keyUseRetry is how soon a use whose recording failed is tried again.
const keyUseRetry = time.Minute

// maxKeyUses bounds the keys keyUses remembers (it starts over when full).
const maxKeyUses = 100_000

// keyUses records that management keys authenticated requests, coarsely
// (state.KeyUseResolution), without a raft write per request: a request
// costs a map lookup; once an hour per key (per node) it reads the
// recorded use and, when that is an hour old, proposes RecordKeyUsed
// within the request (at most keyUseTimeout; a failure only delays the
// record).
type keyUses struct {
	cluster Cluster
	state   State
	log     hclog.Logger
	now     func() time.Time

	mu   sync.Mutex
	next map[string]int64 // key id -> Unix ms before which its use is not looked at
}

func newKeyUses(c Cluster, st State, log hclog.Logger, now func() time.Time) *keyUses {
	return &keyUses{cluster: c, state: st, log: log, now: now, next: map[string]int64{}}
}

// note records key's use when it is due.
func (u *keyUses) note(ctx context.Context, key *raftv1.Key) {
	now := u.now().UnixMilli()
	id := key.GetId()
	u.mu.Lock()
	if next, seen := u.next[id]; seen && now < next {
		u.mu.Unlock()
		return
	}
	if len(u.next) >= maxKeyUses {
		clear(u.next)
	}
	u.next[id] = now + state.KeyUseResolution
	u.mu.Unlock()

	used, err := u.state.KeysLastUsed(key.GetAccountId())
	if err == nil && now-used[id] < state.KeyUseResolution {
		u.later(id, used[id]+state.KeyUseResolution)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyUseTimeout)
	defer cancel()
	res, err := u.cluster.Apply(ctx, &raftv1.Command{Op: &raftv1.Command_RecordKeyUsed{RecordKeyUsed: &raftv1.RecordKeyUsed{
		AccountId: key.GetAccountId(), KeyId: id,
	}}})
	if err != nil {
		u.log.Debug("recording a key's use failed; a later request will", "key", id, "error", err)
		u.later(id, now+keyUseRetry.Milliseconds())
		return
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		u.log.Debug("recording a key's use refused", "key", id, "status", res.GetStatus(), "message", res.GetMessage())
	}
}

// later sets when key id's use is looked at next.
func (u *keyUses) later(id string, atMs int64) {
	u.mu.Lock()
	u.next[id] = atMs
	u.mu.Unlock()
}
