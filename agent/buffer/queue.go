package buffer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// The key layout. An item's key is
//
//	prefix (1 byte) | seq (8, big endian) | time in Unix ms (8) | value length (4)
//
// so items sort by sequence number, and counting bytes, finding the oldest
// time and deleting need only the keys. The mark of a queue ('m' and its
// prefix) holds the highest sequence number deleted, written in the same
// transaction as the deletion, so numbers never go back after a restart
// even when the queue is empty.
const (
	prefixEvent  byte = 'e'
	prefixResult byte = 'r'
	prefixMark   byte = 'm'
	keyLen            = 1 + 8 + 8 + 4
)

// deleteBatch is how many items one deleting transaction removes.
const deleteBatch = 1000

// queue is one sequence of items (events or results). Its fields are
// guarded by Buffer.mu, except first, which only deleting (under
// Buffer.delMu) and load change, and reads load.
type queue struct {
	prefix byte
	// next is the sequence number of the next append.
	next uint64
	// first is the lowest sequence number that may still be held: reads
	// seek there instead of walking over the deleted items, whose
	// tombstones stay until Badger compacts them.
	first atomic.Uint64
	// inflight are the appends not yet written.
	inflight map[uint64]struct{}
	count    int64
}

func newQueue(prefix byte) *queue {
	q := &queue{prefix: prefix, next: 1, inflight: make(map[uint64]struct{})}
	q.first.Store(1)
	return q
}

// itemKey is the key of an item.
func itemKey(prefix byte, seq uint64, atMs int64, valueLen int) []byte {
	k := make([]byte, keyLen)
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], seq)
	binary.BigEndian.PutUint64(k[9:], uint64(atMs))
	binary.BigEndian.PutUint32(k[17:], uint32(valueLen))
	return k
}

// parseKey reads an item's key.
func parseKey(k []byte) (seq uint64, atMs int64, size int64, err error) {
	if len(k) != keyLen {
		return 0, 0, 0, fmt.Errorf("buffer key %x: bad length", k)
	}
	return binary.BigEndian.Uint64(k[1:]), int64(binary.BigEndian.Uint64(k[9:])),
		entrySize(int(binary.BigEndian.Uint32(k[17:]))), nil
}

// entrySize is what an item with a value of n bytes counts against the
// bound.
func entrySize(n int) int64 { return int64(keyLen + n) }

func (q *queue) markKey() []byte { return []byte{prefixMark, q.prefix} }

// seekKey is where reads of q start.
func (q *queue) seekKey(seq uint64) []byte {
	k := make([]byte, 9)
	k[0] = q.prefix
	binary.BigEndian.PutUint64(k[1:], seq)
	return k
}

// visible is the highest sequence number below every append still being
// written: items up to it may be read and acknowledged.
func (q *queue) visible() uint64 {
	v := q.next - 1
	for seq := range q.inflight {
		if seq-1 < v {
			v = seq - 1
		}
	}
	return v
}

// load counts q's items and their bytes and sets its sequence numbers
// from the database.
func (q *queue) load(db *badger.DB) (int64, error) {
	var bytes int64
	err := db.View(func(txn *badger.Txn) error {
		var mark uint64
		item, err := txn.Get(q.markKey())
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return err
		default:
			if err := item.Value(func(v []byte) error {
				if len(v) != 8 {
					return fmt.Errorf("buffer mark %x: bad length", v)
				}
				mark = binary.BigEndian.Uint64(v)
				return nil
			}); err != nil {
				return err
			}
		}
		last := mark
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{q.prefix}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			seq, _, size, err := parseKey(it.Item().Key())
			if err != nil {
				return err
			}
			q.count++
			bytes += size
			last = max(last, seq)
		}
		q.first.Store(mark + 1)
		q.next = last + 1
		return nil
	})
	return bytes, err
}

// scan passes the items of q up to upTo to fn, oldest first: at most max
// of them (0: no limit) and, past the first, at most maxBytes values
// together (0: no limit).
func (q *queue) scan(db *badger.DB, upTo uint64, max, maxBytes int, fn func(seq uint64, val []byte) error) error {
	return db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = []byte{q.prefix}
		if max > 0 && max < opts.PrefetchSize {
			opts.PrefetchSize = max
		}
		it := txn.NewIterator(opts)
		defer it.Close()
		n, total := 0, 0
		for it.Seek(q.seekKey(q.first.Load())); it.Valid(); it.Next() {
			item := it.Item()
			seq, _, size, err := parseKey(item.Key())
			if err != nil {
				return err
			}
			if seq > upTo || (max > 0 && n >= max) {
				return nil
			}
			vlen := int(size) - keyLen
			if maxBytes > 0 && n > 0 && total+vlen > maxBytes {
				return nil
			}
			if err := item.Value(func(v []byte) error { return fn(seq, v) }); err != nil {
				return err
			}
			n++
			total += vlen
		}
		return nil
	})
}

// oldest returns the time of q's first item, 0 when there is none.
func (q *queue) oldest(db *badger.DB) (int64, error) {
	var at int64
	err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{q.prefix}})
		defer it.Close()
		it.Seek(q.seekKey(q.first.Load()))
		if !it.Valid() {
			return nil
		}
		_, ms, _, err := parseKey(it.Item().Key())
		at = ms
		return err
	})
	return at, err
}

// deleteUpTo deletes q's items with seq <= upTo, oldest first, and stops
// once need bytes are freed (need < 0: no limit). It returns how many
// items and bytes it deleted. Callers hold Buffer.delMu.
func (q *queue) deleteUpTo(db *badger.DB, upTo uint64, need int64) (n int64, freed int64, err error) {
	for need < 0 || freed < need {
		var keys [][]byte
		var last uint64
		var batch int64
		err := db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{q.prefix}})
			defer it.Close()
			for it.Seek(q.seekKey(q.first.Load())); it.Valid() && len(keys) < deleteBatch; it.Next() {
				seq, _, size, err := parseKey(it.Item().Key())
				if err != nil {
					return err
				}
				if seq > upTo || (need >= 0 && freed+batch >= need) {
					break
				}
				keys = append(keys, it.Item().KeyCopy(nil))
				batch += size
				last = seq
			}
			return nil
		})
		if err != nil || len(keys) == 0 {
			return n, freed, err
		}
		mark := make([]byte, 8)
		binary.BigEndian.PutUint64(mark, last)
		err = db.Update(func(txn *badger.Txn) error {
			for _, k := range keys {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return txn.Set(q.markKey(), mark)
		})
		if err != nil {
			return n, freed, fmt.Errorf("delete buffered items: %w", err)
		}
		n += int64(len(keys))
		freed += batch
		q.first.Store(last + 1)
	}
	return n, freed, nil
}
