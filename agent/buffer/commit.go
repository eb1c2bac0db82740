package buffer

import (
	"errors"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// The limits of one group commit.
const (
	maxGroupItems = 512
	maxGroupBytes = 512 << 10
)

// write is one append waiting for its group commit.
type write struct {
	key, value []byte
	done       chan error
}

// committer writes the appends in groups: one goroutine takes every
// append waiting, writes them in one transaction and one fsync, and
// answers each. Badger syncs its write-ahead log once per transaction, so
// appends committed one transaction each would pay one fsync each however
// many run at once; grouped, 64 concurrent appenders share an fsync.
type committer struct {
	db *badger.DB
	// after sees the result of every transaction and returns what its
	// appends are answered (Buffer.checkWrite: a failed write, or a
	// directory removed under the database, is not durable).
	after func(error) error
	in    chan write
	done  chan struct{}
	// txns counts the transactions written, for tests.
	txns atomic.Int64
}

func newCommitter(db *badger.DB, after func(error) error) *committer {
	if after == nil {
		after = func(err error) error { return err }
	}
	c := &committer{db: db, after: after, in: make(chan write, maxGroupItems), done: make(chan struct{})}
	go c.run()
	return c
}

// commit writes key and value durably and returns once they are fsynced.
func (c *committer) commit(key, value []byte) error {
	w := write{key: key, value: value, done: make(chan error, 1)}
	c.in <- w
	return <-w.done
}

// close stops the goroutine once every commit sent has been answered.
// No commit may be sent after it.
func (c *committer) close() {
	close(c.in)
	<-c.done
}

func (c *committer) run() {
	defer close(c.done)
	for w, ok := <-c.in; ok; w, ok = <-c.in {
		group := []write{w}
		size := len(w.key) + len(w.value)
	more:
		for len(group) < maxGroupItems && size < maxGroupBytes {
			select {
			case w, ok := <-c.in:
				if !ok {
					break more
				}
				group = append(group, w)
				size += len(w.key) + len(w.value)
			default:
				break more
			}
		}
		c.write(group)
	}
}

// write commits group, in as few transactions as Badger takes, and answers
// every write of it.
func (c *committer) write(group []write) {
	for len(group) > 0 {
		txn := c.db.NewTransaction(true)
		n := 0
		var err error
		for ; n < len(group); n++ {
			if err = txn.Set(group[n].key, group[n].value); err != nil {
				break
			}
		}
		switch {
		case err == nil, errors.Is(err, badger.ErrTxnTooBig) && n > 0:
			// The first n fit; the rest go in the next transaction.
			err = txn.Commit()
			c.txns.Add(1)
			if err = c.after(err); err != nil && errors.Is(err, ErrUnavailable) {
				c.undo(group[:n])
			}
		default:
			txn.Discard()
			n = len(group)
		}
		for _, w := range group[:n] {
			w.done <- err
		}
		group = group[n:]
	}
}

// undo deletes the items of a transaction whose appends are answered with
// an error although it committed (the directory was not the buffer's any
// more): a recovery must not carry them over, their senders retry them.
func (c *committer) undo(group []write) {
	_ = c.db.Update(func(txn *badger.Txn) error {
		for _, w := range group {
			if err := txn.Delete(w.key); err != nil {
				return err
			}
		}
		return nil
	})
}
