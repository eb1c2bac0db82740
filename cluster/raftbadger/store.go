// Package raftbadger is a hashicorp/raft LogStore and StableStore backed by
// Badger v4.
//
// It exists because the module proxy we build from carries no Badger raft
// store, and raft-boltdb/v2 does not build against raft v1.8.0; Lookout
// already uses Badger (through internal/badgerutil) for its other databases,
// so the raft log lives in Badger too.
//
// Layout: log entries are stored under logPrefix followed by the 8-byte
// big-endian index, so Badger's key order is log order; stable keys are
// stored under stablePrefix followed by the raw key. Log values use the
// versioned binary encoding in codec.go. Every commit is fsynced
// (SyncWrites), and a background goroutine garbage-collects the value log.
package raftbadger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"lookout/internal/badgerutil"
)

const (
	logPrefix    byte = 0x01
	stablePrefix byte = 0x02
)

// Defaults applied by Open to zero-valued Options fields.
const (
	DefaultGCInterval     = badgerutil.DefaultGCInterval
	DefaultGCDiscardRatio = badgerutil.DefaultGCDiscardRatio
	DefaultDeleteBatch    = 1000
)

// errNotFound is what Get returns for a missing key. raft compares the
// message, not the value (err.Error() == "not found"), so the text must stay
// exactly "not found".
var errNotFound = errors.New("not found")

var (
	_ raft.LogStore    = (*Store)(nil)
	_ raft.StableStore = (*Store)(nil)
)

// Options configures Open.
type Options struct {
	// Dir is the database directory; it is created if missing.
	Dir string
	// Small trims Badger's memory use (see badgerutil.Config.Small).
	Small bool
	// Logger receives Badger's and the store's own messages; nil discards.
	Logger hclog.Logger
	// GCInterval is how often value-log GC runs. Zero means
	// DefaultGCInterval; a negative value disables the GC goroutine.
	GCInterval time.Duration
	// GCDiscardRatio is passed to badger.DB.RunValueLogGC and must be in
	// (0, 1). Zero means DefaultGCDiscardRatio.
	GCDiscardRatio float64
	// DeleteBatch is the number of log entries DeleteRange removes per
	// transaction. Zero or negative means DefaultDeleteBatch.
	DeleteBatch int
}

// Store is a raft.LogStore and raft.StableStore on one Badger database. It is
// safe for concurrent use.
type Store struct {
	db          *badger.DB
	logger      hclog.Logger
	deleteBatch int

	stopGC    func()
	closeOnce sync.Once
	closeErr  error
}

// Open opens (or creates) the store in o.Dir, with synchronous writes, and
// starts the value-log GC goroutine. Call Close when done.
func Open(o Options) (*Store, error) {
	if o.GCInterval == 0 {
		o.GCInterval = DefaultGCInterval
	}
	if o.GCDiscardRatio == 0 {
		o.GCDiscardRatio = DefaultGCDiscardRatio
	}
	if o.GCDiscardRatio <= 0 || o.GCDiscardRatio >= 1 {
		return nil, fmt.Errorf("raftbadger: GCDiscardRatio %v not in (0, 1)", o.GCDiscardRatio)
	}
	if o.DeleteBatch <= 0 {
		o.DeleteBatch = DefaultDeleteBatch
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	db, err := badgerutil.Open(badgerutil.Config{Dir: o.Dir, SyncWrites: true, Small: o.Small, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("raftbadger: %w", err)
	}
	s := &Store{db: db, logger: o.Logger, deleteBatch: o.DeleteBatch, stopGC: func() {}}
	if o.GCInterval > 0 {
		s.stopGC = badgerutil.StartGC(db, o.GCInterval, o.GCDiscardRatio, o.Logger)
	}
	return s, nil
}

// Close stops the GC goroutine and closes the database. It is idempotent:
// later calls return the result of the first.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stopGC()
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("raftbadger: close: %w", err)
		}
	})
	return s.closeErr
}

func logKey(index uint64) []byte {
	k := make([]byte, 9)
	k[0] = logPrefix
	binary.BigEndian.PutUint64(k[1:], index)
	return k
}

func stableKey(key []byte) []byte {
	return append([]byte{stablePrefix}, key...)
}

// edgeIndex returns the lowest (reverse=false) or highest (reverse=true)
// stored log index, or 0 when there are no logs.
func (s *Store) edgeIndex(reverse bool) (uint64, error) {
	var idx uint64
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{
			PrefetchValues: false,
			Reverse:        reverse,
			Prefix:         []byte{logPrefix},
		})
		defer it.Close()
		seek := logKey(0)
		if reverse {
			seek = logKey(math.MaxUint64)
		}
		it.Seek(seek)
		if it.Valid() {
			k := it.Item().Key()
			if len(k) != 9 {
				return fmt.Errorf("raftbadger: malformed log key %x", k)
			}
			idx = binary.BigEndian.Uint64(k[1:])
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("raftbadger: read log bounds: %w", err)
	}
	return idx, nil
}

// FirstIndex returns the first stored log index, or 0 if there are none.
func (s *Store) FirstIndex() (uint64, error) { return s.edgeIndex(false) }

// LastIndex returns the last stored log index, or 0 if there are none.
func (s *Store) LastIndex() (uint64, error) { return s.edgeIndex(true) }

// GetLog reads the log at index into log. A missing index yields exactly
// raft.ErrLogNotFound; any other failure is returned wrapped.
func (s *Store) GetLog(index uint64, log *raft.Log) error {
	var buf []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(logKey(index))
		if err != nil {
			return err
		}
		buf, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return raft.ErrLogNotFound
	}
	if err != nil {
		return fmt.Errorf("raftbadger: get log %d: %w", index, err)
	}
	if err := decodeLog(buf, log); err != nil {
		return fmt.Errorf("raftbadger: get log %d: %w", index, err)
	}
	return nil
}

// StoreLog stores one log entry.
func (s *Store) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs stores logs in one Badger transaction, which is atomic. A batch
// too big for one transaction (many large entries) is written as
// consecutive transactions in index order instead of failing, which would
// stop raft: a crash between them leaves a contiguous prefix of the batch,
// which raft treats like a shorter append, since neither a leader nor a
// follower counts the batch as stored before StoreLogs returns.
func (s *Store) StoreLogs(logs []*raft.Log) error {
	for start := 0; start < len(logs); {
		n, err := s.storeRun(logs[start:])
		if err != nil {
			return fmt.Errorf("raftbadger: store %d logs: %w", len(logs), err)
		}
		start += n
	}
	return nil
}

// storeRun commits as many leading logs as fit in one transaction and
// returns how many that was.
func (s *Store) storeRun(logs []*raft.Log) (int, error) {
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	n := 0
	for _, l := range logs {
		v, err := encodeLog(nil, l)
		if err != nil {
			return 0, err
		}
		err = txn.Set(logKey(l.Index), v)
		if errors.Is(err, badger.ErrTxnTooBig) && n > 0 {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("log %d: %w", l.Index, err)
		}
		n++
	}
	if err := txn.Commit(); err != nil {
		return 0, err
	}
	return n, nil
}

// DeleteRange deletes the logs with indexes in [min, max], inclusive, in
// transactions of at most DeleteBatch entries each; a failure may leave a
// prefix of the range deleted, which raft tolerates (it only ever truncates
// a prefix or a suffix). min > max deletes nothing.
func (s *Store) DeleteRange(min, max uint64) error {
	for from := min; from <= max; {
		keys, err := s.logKeysIn(from, max, s.deleteBatch)
		if err != nil {
			return fmt.Errorf("raftbadger: delete logs [%d, %d]: %w", min, max, err)
		}
		if len(keys) == 0 {
			return nil
		}
		// Blind deletes: the keys were read in a separate read-only
		// transaction, so this one cannot fail with badger.ErrConflict.
		err = s.db.Update(func(txn *badger.Txn) error {
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("raftbadger: delete logs [%d, %d]: %w", min, max, err)
		}
		last := binary.BigEndian.Uint64(keys[len(keys)-1][1:])
		if len(keys) < s.deleteBatch || last >= max {
			return nil
		}
		from = last + 1
	}
	return nil
}

// logKeysIn returns up to limit stored log keys with index in [from, to].
func (s *Store) logKeysIn(from, to uint64, limit int) ([][]byte, error) {
	var keys [][]byte
	end := logKey(to)
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{logPrefix}})
		defer it.Close()
		for it.Seek(logKey(from)); it.Valid() && len(keys) < limit; it.Next() {
			k := it.Item().KeyCopy(nil)
			if string(k) > string(end) {
				break
			}
			keys = append(keys, k)
		}
		return nil
	})
	return keys, err
}

// Stable store semantics follow raft's InmemStore (raft v1.8.0
// inmem_store.go), which is what raft itself is tested against:
//
//   - Get of a missing key returns (nil, errors.New("not found")). raft
//     checks the message, e.g. raft.go:1715
//     `if err != nil && err.Error() != "not found"` for keyLastVoteCand.
//   - GetUint64 of a missing key returns (0, nil). raft would also accept a
//     "not found" error (api.go:478 HasExistingState, api.go:519 NewRaft,
//     raft.go:1710), but InmemStore returns nil and so do we.
//   - Set(key, nil) makes the key missing again (InmemStore treats a nil
//     value as absent); Set(key, []byte{}) stores an empty, present value.
//
// Unlike InmemStore, Set and SetUint64 share one key space (as in
// raft-boltdb): GetUint64 of a key written by Set with a value that is not 8
// bytes long is an error. raft never mixes them on one key.

// Set stores val under key. A nil val deletes the key.
func (s *Store) Set(key []byte, val []byte) error {
	err := s.db.Update(func(txn *badger.Txn) error {
		if val == nil {
			return txn.Delete(stableKey(key))
		}
		return txn.Set(stableKey(key), val)
	})
	if err != nil {
		return fmt.Errorf("raftbadger: set %q: %w", key, err)
	}
	return nil
}

// Get returns the value stored under key, or (nil, error "not found") if
// there is none; other failures are returned wrapped.
func (s *Store) Get(key []byte) ([]byte, error) {
	val, err := s.get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("raftbadger: get %q: %w", key, err)
	}
	if val == nil {
		val = []byte{}
	}
	return val, nil
}

func (s *Store) get(key []byte) ([]byte, error) {
	var val []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(stableKey(key))
		if err != nil {
			return err
		}
		val, err = item.ValueCopy(nil)
		return err
	})
	return val, err
}

// SetUint64 stores val under key as 8 big-endian bytes.
func (s *Store) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(make([]byte, 0, 8), val))
}

// GetUint64 returns the value stored under key by SetUint64, or (0, nil) if
// there is none; other failures are returned wrapped.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	val, err := s.get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("raftbadger: get %q: %w", key, err)
	}
	if len(val) != 8 {
		return 0, fmt.Errorf("raftbadger: value of %q is %d bytes, not a uint64", key, len(val))
	}
	return binary.BigEndian.Uint64(val), nil
}
