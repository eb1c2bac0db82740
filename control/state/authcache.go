package state

import (
	"sync"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// authCache keeps the keys and accounts that every authenticated request
// reads (KeyByHash, Account) in memory. It is dropped after every applied
// entry that could change them (account, plan and key commands, a restore),
// before the applied index moves, so a revocation takes effect on this node
// as soon as it is applied. Lookups that miss are not cached, so random
// keys cannot grow it; it holds at most every key and account.
//
// The cached messages are shared: callers must not modify them.
type authCache struct {
	mu    sync.RWMutex
	gen   uint64 // bumped by every invalidation
	keys  map[string]*raftv1.Key
	accts map[string]*statev1.Account
}

func newAuthCache() *authCache {
	return &authCache{keys: map[string]*raftv1.Key{}, accts: map[string]*statev1.Account{}}
}

// generation is read before a database read whose result may be cached.
func (c *authCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *authCache) key(hash []byte) (*raftv1.Key, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k, ok := c.keys[string(hash)]
	return k, ok
}

func (c *authCache) account(id string) (*statev1.Account, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a, ok := c.accts[id]
	return a, ok
}

// putKey caches a key read at generation gen, unless an invalidation came
// since (the read may predate the change).
func (c *authCache) putKey(gen uint64, hash []byte, k *raftv1.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.keys[string(hash)] = k
	}
}

func (c *authCache) putAccount(gen uint64, a *statev1.Account) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.accts[a.GetId()] = a
	}
}

// invalidate drops everything.
func (c *authCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
	clear(c.accts)
}

// changesAuth tells whether cmd can change a key or an account.
func changesAuth(cmd *raftv1.Command) bool {
	switch cmd.GetOp().(type) {
	case *raftv1.Command_CreateAccount, *raftv1.Command_SetPlan, *raftv1.Command_SetPassword, *raftv1.Command_CreateKey, *raftv1.Command_RevokeKey:
		return true
	}
	return false
}
