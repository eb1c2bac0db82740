package state

import (
	"maps"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"
)

// The account part of the valueCache: what an IngestBatch reads of each
// account it touches (the account, its quota, its monitor count, its
// monitor creation window, and which of its keys are ingest keys), kept
// from one IngestBatch to the next. Without it every batch costs three
// Badger point reads per account, two per key, and more for the window.
//
// The rule that keeps it coherent is coarser than the per-key one of the
// values: the accounts are cached only across a run of IngestBatch
// entries. An IngestBatch writes none of those keys except through its own
// flush (quota, monitor count, creation window), whose results are what it
// stages here; every other command may write any of them (a plan change, a
// key revoked, a monitor created or deleted, an account deleted), so
// applying one drops the accounts (dropAccounts) before it runs. Staged
// states take effect when their transaction commits, like the values.

// maxCachedAccounts bounds the accounts kept; when full it starts over.
const maxCachedAccounts = 16 << 10

// cachedAccount returns a fresh copy of the account's state as the last
// IngestBatch of the run left it (in txn, or committed), or false.
func (c *valueCache) cachedAccount(txn *badger.Txn, id string) (*acctState, bool) {
	if c == nil {
		return nil, false
	}
	c.own(txn)
	a, ok := c.pendingAccts[id]
	if !ok {
		a, ok = c.accts[id]
	}
	if !ok {
		return nil, false
	}
	return a.copy(), true
}

// stageAccount records a's state after an IngestBatch's flush in txn. a is
// not used by its ingest afterwards.
func (c *valueCache) stageAccount(txn *badger.Txn, a *acctState) {
	if c == nil {
		return
	}
	c.own(txn)
	c.pendingAccts[a.id] = a
}

// dropAccounts forgets every account, committed and staged: the entry
// about to apply is not an IngestBatch.
func (c *valueCache) dropAccounts() {
	if c == nil {
		return
	}
	clear(c.accts)
	clear(c.pendingAccts)
}

// commitAccounts publishes the staged accounts (commit calls it).
func (c *valueCache) commitAccounts() { publishStaged(c.accts, c.pendingAccts, maxCachedAccounts) }

// copy is a's state for a new IngestBatch: nothing dirty, and nothing
// shared that an ingest modifies (the quota, the key answers). The account
// record is shared: an ingest only reads it.
func (a *acctState) copy() *acctState {
	out := &acctState{id: a.id, acct: a.acct, monitors: a.monitors, created: a.created, keys: maps.Clone(a.keys)}
	if a.quota != nil {
		out.quota = proto.CloneOf(a.quota)
	}
	out.created.dirty = false
	return out
}
