package state

import (
	"bytes"
	"errors"
	"strings"

	"github.com/dgraph-io/badger/v4"
)

// valueCache keeps, across entries, the committed values of the keys that
// every IngestBatch reads for each monitor it touches: mon-name: (the ping
// monitor of a name), mon: (the monitor, with its retention start), runs:
// (its open runs) and ev-lo: (a retention start in the former layout).
// Without it, each monitor of each batch costs up to four Badger point reads
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
//     writers are monitorCache.flush, (*ingest).monitor and
//     applyDeleteMonitor; TestValueCacheCoherent checks the cache against
//     the database after a mixed workload.
//   - A read that misses goes to the transaction; with no pending write of
//     the key, the transaction sees the committed value, which is cached.
//   - Restore, the only other writer of the database, clears it.
//
// It also keeps the receipt time of the events stored since the process
// started (received), with the same rules: retention trimming deletes an
// event's time index with it, whose key holds the receipt time, and would
// otherwise read the event for it. Every write and delete of an ev: key in
// an apply goes through eventStored and eventDeleted.
//
// Only the apply (the FSM goroutine: ApplyBatch and Restore) uses it, so it
// takes no lock. Cached values are shared: callers must not modify them. It
// is bounded by maxValueCacheBytes; when full it starts over.
type valueCache struct {
	committed map[string]cachedValue
	bytes     int

	received map[string]int64 // ev: key -> received_unix_ms, events present

	txn         *badger.Txn // the transaction pending belongs to
	pending     map[string]cachedValue
	pendingRecv map[string]int64 // -1: deleted

	// The accounts, kept across a run of IngestBatch entries (acctcache.go).
	accts, pendingAccts map[string]*acctState
}

// cachedValue is a value, or (ok false) the key's absence.
type cachedValue struct {
	v  []byte
	ok bool
}

// maxValueCacheBytes bounds the committed values (with their keys and an
// estimate of the map overhead), maxReceivedEvents the receipt times.
const (
	maxValueCacheBytes = 64 << 20
	maxReceivedEvents  = 256 << 10
)

func newValueCache() *valueCache {
	return &valueCache{
		committed: map[string]cachedValue{}, received: map[string]int64{},
		pending: map[string]cachedValue{}, pendingRecv: map[string]int64{},
		accts: map[string]*acctState{}, pendingAccts: map[string]*acctState{},
	}
}

// cacheable tells whether key is one of the cached kinds.
func cacheable(key []byte) bool {
	return bytes.HasPrefix(key, prefixMonitor) || bytes.HasPrefix(key, prefixMonitorName) ||
		bytes.HasPrefix(key, prefixRuns) || bytes.HasPrefix(key, prefixEventLow)
}

// own makes pending belong to txn, dropping what another transaction left.
func (c *valueCache) own(txn *badger.Txn) {
	if c.txn != txn {
		c.txn = txn
		clear(c.pending)
		clear(c.pendingRecv)
		clear(c.pendingAccts)
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
// returns the monitors whose records they changed, with the records as
// committed (shared: not to be modified).
func (c *valueCache) commit(txn *badger.Txn) (monitors []MonitorChange) {
	if c == nil || c.txn != txn {
		return nil
	}
	for key, cv := range c.pending {
		c.remember(key, cv)
		if id, ok := strings.CutPrefix(key, string(prefixMonitor)); ok {
			monitors = append(monitors, MonitorChange{UUID: id, record: cv.v, present: cv.ok})
		}
	}
	for key, ms := range c.pendingRecv {
		switch {
		case ms < 0:
			delete(c.received, key)
		case len(c.received) < maxReceivedEvents:
			c.received[key] = ms
		}
	}
	clear(c.pending)
	clear(c.pendingRecv)
	c.commitAccounts()
	c.txn = nil
	return monitors
}

// reset forgets everything (the database was replaced).
func (c *valueCache) reset() {
	if c == nil {
		return
	}
	clear(c.committed)
	clear(c.pending)
	clear(c.received)
	clear(c.pendingRecv)
	c.dropAccounts()
	c.bytes, c.txn = 0, nil
}

// eventStored records that txn stored the event at key, received at ms.
func (c *valueCache) eventStored(txn *badger.Txn, key []byte, ms int64) {
	if c == nil {
		return
	}
	c.own(txn)
	c.pendingRecv[string(key)] = max(ms, 0)
}

// eventDeleted records that txn deleted the event at key.
func (c *valueCache) eventDeleted(txn *badger.Txn, key []byte) {
	if c == nil {
		return
	}
	c.own(txn)
	c.pendingRecv[string(key)] = -1
}

// eventReceived is the receipt time of the event at key as txn sees it,
// when known: present false when the event is known to be absent.
func (c *valueCache) eventReceived(txn *badger.Txn, key []byte) (ms int64, present, known bool) {
	if c == nil {
		return 0, false, false
	}
	c.own(txn)
	if ms, ok := c.pendingRecv[string(key)]; ok {
		return ms, ms >= 0, true
	}
	ms, ok := c.received[string(key)]
	return ms, true, ok
}
