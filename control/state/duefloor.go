package state

import (
	"bytes"
	"sync"
)

// dueFloor lets DueDeliveries start its scan past the delivered part of
// the due index. A delivery that is recorded deletes its due key, and
// Badger keeps a deleted key (a tombstone) until a compaction drops it:
// the front of the index, in next-try order, fills with the deleted keys
// of everything delivered, and a scan from the index's start walks every
// one of them. After a burst of alerts the dispatcher, which scans after
// each attempt, spent most of the leader's CPU there.
//
// The floor is a key below which no due key is live: each scan starts
// at it and moves it up to the first live key it saw. A transaction that
// sets a due key moves it down to that key once it has committed. A scan
// moves it up only if no such transaction committed since it read the
// floor (gen), so it never hides a key its snapshot did not see.
type dueFloor struct {
	mu    sync.Mutex
	floor []byte // nil: the index's start
	gen   uint64 // counts the lowerings

	// set is the lowest due key the transaction being built sets (FSM
	// goroutine only; nil: none).
	set []byte
}

// dueEnd is past every key of the due index: the floor when none is live.
var dueEnd = kb(prefixAlertDue, bytes.Repeat([]byte{0xff}, 9))

// start returns the key a scan starts at, and the generation to pass to
// advance.
func (f *dueFloor) start() ([]byte, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.floor == nil {
		return prefixAlertDue, f.gen
	}
	return f.floor, f.gen
}

// advance moves the floor up to first, the first live key a scan that
// started at generation gen saw (dueEnd: none), unless a due key was set
// since.
func (f *dueFloor) advance(gen uint64, first []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen == gen && bytes.Compare(first, f.floor) > 0 {
		f.floor = first
	}
}

// setting notes that the transaction being built sets due key key (FSM
// goroutine).
func (f *dueFloor) setting(key []byte) {
	if f.set == nil || bytes.Compare(key, f.set) < 0 {
		f.set = key
	}
}

// committed lowers the floor to the lowest key the committed transaction
// set, if any (FSM goroutine, after the commit, before the change watch
// tells the dispatcher).
func (f *dueFloor) committed() {
	if f.set == nil {
		return
	}
	f.lower(f.set)
	f.set = nil
}

// lower moves the floor down to key (nil: the index's start).
func (f *dueFloor) lower(key []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	if key == nil || bytes.Compare(key, f.floor) < 0 {
		f.floor = key
	}
}
