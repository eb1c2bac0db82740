package state

import (
	"sync"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// authCache keeps the keys, accounts and users that every authenticated
// request reads (KeyByHash, Account, User) in memory, and whether the panel sessions
// seen were ended (SessionEnded). It is dropped after every applied entry
// that could change them (account, plan, key, user and session commands, a
// restore), before the applied index moves, so a revocation or a sign-out
// takes effect on this node as soon as it is applied. Lookups of keys and
// accounts that miss are not cached, so random keys cannot grow it; it
// holds at most every key and account. Sessions are asked about only
// once their signed cookie checked out, and at most maxCachedSessions of
// them are kept (past that they are read from the database).
//
// The cached messages are shared: callers must not modify them.
type authCache struct {
	mu       sync.RWMutex
	gen      uint64 // bumped by every invalidation
	keys     map[string]*raftv1.Key
	accts    map[string]*statev1.Account
	users    map[string]*statev1.User
	sessions map[string]bool
}

// maxCachedSessions caps authCache.sessions.
const maxCachedSessions = 100_000

func newAuthCache() *authCache {
	return &authCache{keys: map[string]*raftv1.Key{}, accts: map[string]*statev1.Account{}, users: map[string]*statev1.User{}, sessions: map[string]bool{}}
}

func (c *authCache) sessionEnded(id string) (ended, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ended, ok = c.sessions[id]
	return ended, ok
}

// putSession caches whether session id was ended, read at generation gen,
// unless an invalidation came since or the cache is full.
func (c *authCache) putSession(gen uint64, id string, ended bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen && len(c.sessions) < maxCachedSessions {
		c.sessions[id] = ended
	}
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

func userCacheKey(accountID, userID string) string { return accountID + "\x00" + userID }

func (c *authCache) user(accountID, userID string) (*statev1.User, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	u, ok := c.users[userCacheKey(accountID, userID)]
	return u, ok
}

// putUser caches a user read at generation gen. Users are read only for
// sessions whose signed cookie checked out, so the map holds at most every
// user.
func (c *authCache) putUser(gen uint64, u *statev1.User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.users[userCacheKey(u.GetAccountId(), u.GetId())] = u
	}
}

// invalidate drops everything.
func (c *authCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
	clear(c.accts)
	clear(c.users)
	clear(c.sessions)
}

// changesAuth tells whether cmd can change a key, an account or a session.
func changesAuth(cmd *raftv1.Command) bool {
	switch cmd.GetOp().(type) {
	case *raftv1.Command_CreateAccount, *raftv1.Command_SetPlan, *raftv1.Command_SetPassword, *raftv1.Command_CreateKey, *raftv1.Command_RevokeKey,
		*raftv1.Command_EndSession, *raftv1.Command_SetBadgeKey,
		*raftv1.Command_AddUser, *raftv1.Command_UpdateUser, *raftv1.Command_RemoveUser, *raftv1.Command_AcceptInvite:
		return true
	}
	return false
}
