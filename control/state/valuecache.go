package state

import (
	"bytes"
	"errors"
	"maps"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// valueCache keeps, across entries, the committed values of the keys that
// every IngestBatch reads for each monitor it touches: mon-name: (the ping
// monitor of a name), mon: (the monitor, with its retention start) and
// runs: (its open runs); and for each key it carries, key-used: (the key's
// last recorded use); and check: (a check's status, which every execution
// reads and writes, and which a commit reports for the lists,
// listcache.go).
// Without it, each monitor of each batch costs up to three Badger point reads
// (each a memtable and LSM lookup).
//
// It is exactly coherent with the database, so it changes the speed of an
// apply, never its result:
//
//   - It holds what the last commit left (or that a key is absent), and
//     the writes of the open apply transaction apart (pending), which take
//     effect only when that transaction commits (commit); a discarded
//     transaction's writes are dropped with it (pending belongs to one
//     transaction, and another transaction starts afresh).
//   - Every write of a cached key in an apply goes through set or del. The
//     writers are monitorCache.flush, (*ingest).monitor, putMonitorIn,
//     putCheckStatus, applyDeleteMonitor, deleteExecutions, touchKey and
//     applyRevokeKey; TestValueCacheCoherent checks the cache against
//     the database after a mixed workload.
//   - A read that misses goes to the transaction; with no pending write of
//     the key, the transaction sees the committed value, which is cached.
//   - Restore, the only other writer of the database, clears it.
//
// It also keeps which events the process has stored since it started
// (events), with the same rules: retention trimming deletes the oldest
// event of a full monitor, and would otherwise read it to know whether it
// is there. Every write and delete of an ev: key in an apply goes through
// eventStored and eventDeleted.
//
// Only the apply (the FSM goroutine: ApplyBatch and Restore) uses it, so it
// takes no lock. Cached values are shared: callers must not modify them. It
// is bounded by maxValueCacheBytes; when full it starts over.
type valueCache struct {
	committed map[string]cachedValue
	bytes     int

	events map[string]struct{} // ev: keys of events present

	txn           *badger.Txn // the transaction pending belongs to
	pending       map[string]cachedValue
	pendingEvents map[string]bool // false: deleted

	// The accounts, kept across a run of IngestBatch entries (acctcache.go).
	accts, pendingAccts map[string]*acctState
	// The scans of an account's channels and windows, kept across a run of
	// entries that write neither (scancache.go).
	scans, pendingScans map[scanKey]any
}

// cachedValue is a value, or (ok false) the key's absence.
type cachedValue struct {
	v  []byte
	ok bool
}

// maxValueCacheBytes bounds the committed values (with their keys and an
// estimate of the map overhead), maxEvents the events.
const (
	maxValueCacheBytes = 64 << 20
	maxEvents          = 256 << 10
)

func newValueCache() *valueCache {
	return &valueCache{
		committed: map[string]cachedValue{}, events: map[string]struct{}{},
		pending: map[string]cachedValue{}, pendingEvents: map[string]bool{},
		accts: map[string]*acctState{}, pendingAccts: map[string]*acctState{},
		scans: map[scanKey]any{}, pendingScans: map[scanKey]any{},
	}
}

// cacheable tells whether key is one of the cached kinds.
func cacheable(key []byte) bool {
	return bytes.HasPrefix(key, prefixMonitor) || bytes.HasPrefix(key, prefixMonitorName) ||
		bytes.HasPrefix(key, prefixRuns) || bytes.HasPrefix(key, prefixKeyUsed) ||
		bytes.HasPrefix(key, prefixCheckStatus)
}

// own makes pending belong to txn, dropping what another transaction left.
func (c *valueCache) own(txn *badger.Txn) {
	if c.txn != txn {
		c.txn = txn
		clear(c.pending)
		clear(c.pendingEvents)
		clear(c.pendingAccts)
		clear(c.pendingScans)
	}
}

// get reads key in txn: its value, ErrNotFound when absent. The value
// must not be modified.
func (c *valueCache) get(txn *badger.Txn, key []byte) ([]byte, error) {
	if c == nil || !cacheable(key) {
		return getRaw(txn, key)
	}
	c.own(txn)
	cv, ok := c.pending[string(key)]
	if !ok {
		cv, ok = c.committed[string(key)]
	}
	if !ok {
		v, err := getRaw(txn, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		cv = cachedValue{v: v, ok: err == nil}
		c.remember(string(key), cv)
	}
	if !cv.ok {
		return nil, ErrNotFound
	}
	return cv.v, nil
}

// remember caches a committed value.
func (c *valueCache) remember(key string, cv cachedValue) {
	if old, ok := c.committed[key]; ok {
		c.bytes -= entryBytes(key, old)
	}
	if c.bytes+entryBytes(key, cv) > maxValueCacheBytes {
		clear(c.committed)
		c.bytes = 0
	}
	c.committed[key] = cv
	c.bytes += entryBytes(key, cv)
}

func entryBytes(key string, cv cachedValue) int { return len(key) + len(cv.v) + 64 }

// set writes key in txn. v must not be modified afterwards.
func (c *valueCache) set(txn *badger.Txn, key, v []byte) error {
	if err := txn.Set(key, v); err != nil {
		return err
	}
	if c != nil && cacheable(key) {
		c.own(txn)
		c.pending[string(key)] = cachedValue{v: v, ok: true}
	}
	return nil
}

// del deletes key in txn.
func (c *valueCache) del(txn *badger.Txn, key []byte) error {
	if err := txn.Delete(key); err != nil {
		return err
	}
	if c != nil && cacheable(key) {
		c.own(txn)
		c.pending[string(key)] = cachedValue{}
	}
	return nil
}

// commit publishes the writes of txn, which has just committed, and
// returns the monitors whose records they changed and the checks whose
// statuses they changed, with the records as committed (shared: not to be
// modified).
func (c *valueCache) commit(txn *badger.Txn) (monitors, statuses []MonitorChange) {
	if c == nil || c.txn != txn {
		return nil, nil
	}
	for key, cv := range c.pending {
		c.remember(key, cv)
		if id, ok := strings.CutPrefix(key, string(prefixMonitor)); ok {
			monitors = append(monitors, MonitorChange{UUID: id, record: cv.v, present: cv.ok})
		} else if id, ok := strings.CutPrefix(key, string(prefixCheckStatus)); ok {
			statuses = append(statuses, MonitorChange{UUID: id, record: cv.v, present: cv.ok})
		}
	}
	for key, present := range c.pendingEvents {
		switch {
		case !present:
			delete(c.events, key)
		case len(c.events) < maxEvents:
			c.events[key] = struct{}{}
		}
	}
	clear(c.pending)
	clear(c.pendingEvents)
	c.commitAccounts()
	c.commitScans()
	c.txn = nil
	return monitors, statuses
}

// reset forgets everything (the database was replaced).
func (c *valueCache) reset() {
	if c == nil {
		return
	}
	clear(c.committed)
	clear(c.pending)
	clear(c.events)
	clear(c.pendingEvents)
	c.dropAccounts()
	c.dropScans()
	c.bytes, c.txn = 0, nil
}

// eventStored records that txn stored the event at key.
func (c *valueCache) eventStored(txn *badger.Txn, key []byte) {
	if c == nil {
		return
	}
	c.own(txn)
	c.pendingEvents[string(key)] = true
}

// eventDeleted records that txn deleted the event at key.
func (c *valueCache) eventDeleted(txn *badger.Txn, key []byte) {
	if c == nil {
		return
	}
	c.own(txn)
	c.pendingEvents[string(key)] = false
}

// eventPresent tells whether the event at key is there as txn sees it,
// when known.
func (c *valueCache) eventPresent(txn *badger.Txn, key []byte) (present, known bool) {
	if c == nil {
		return false, false
	}
	c.own(txn)
	if present, ok := c.pendingEvents[string(key)]; ok {
		return present, true
	}
	_, ok := c.events[string(key)]
	return ok, ok
}

// publishStaged moves what a committed transaction staged into what is
// kept, starting over when the two together would pass max.
func publishStaged[K comparable, V any](kept, staged map[K]V, max int) {
	if len(kept)+len(staged) > max {
		clear(kept)
	}
	maps.Copy(kept, staged)
	clear(staged)
}
