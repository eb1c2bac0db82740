// Package buffer is the edge agent's disk buffer: the pings it accepted
// and the check results it produced, kept in Badger in the agent's data
// dir until the control plane has acknowledged them as committed.
//
// Two queues share one bound (MaxBytes): events (pings) and results
// (check executions). Each item gets a sequence number of its queue;
// items are read oldest first and deleted by acknowledging a sequence
// number. An append that returns nil is fsynced (Badger's SyncWrites);
// concurrent appends are written in groups, one transaction and one fsync
// per group (commit.go).
//
// When the bound is reached, the oldest results are dropped to make room
// (for a new result or a new event), and counted. When events alone fill
// the buffer, a new event is refused with ErrFull (the job's retry keeps
// it) and a new result replaces the older results. See agent/README.md
// for the key layout.
package buffer

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"lookout/internal/badgerutil"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// DefaultMaxBytes is the bound of a buffer whose Options do not set one
// (--buffer-max-bytes).
const DefaultMaxBytes int64 = 1 << 30

// ErrFull is returned by AppendEvent when the events already held fill
// the buffer.
var ErrFull = errors.New("buffer full")

// ErrTooLarge is returned for one item larger than the whole buffer.
var ErrTooLarge = errors.New("item larger than the buffer")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("buffer closed")

// Options configures a Buffer.
type Options struct {
	// Dir holds the Badger database; it is created if missing.
	Dir string
	// MaxBytes bounds the bytes of the items held (keys and encoded
	// values); DefaultMaxBytes when 0.
	MaxBytes int64
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Small trims Badger's memory, for tests and small machines.
	Small bool
	// Registerer, when set, gets the buffer's metrics.
	Registerer prometheus.Registerer
	// GCInterval is how often Badger's value log is collected
	// (badgerutil.DefaultGCInterval when 0).
	GCInterval time.Duration
}

// EventEntry is a buffered event and its sequence number.
type EventEntry struct {
	Seq   uint64
	Event *raftv1.Event
}

// ResultEntry is a buffered check result and its sequence number.
type ResultEntry struct {
	Seq       uint64
	Execution *raftv1.Execution
}

// Stats describes what the buffer holds.
type Stats struct {
	// Events and Results are the items held.
	Events, Results int64
	// Bytes is what they count against MaxBytes.
	Bytes int64
	// MaxBytes is the bound.
	MaxBytes int64
	// OldestUnixMs is the time of the oldest item held (an event's receipt
	// time, a result's finish time), 0 when the buffer is empty.
	OldestUnixMs int64
	// DroppedResults counts the results dropped to make room, and
	// RefusedFull the events refused with ErrFull, since Open.
	DroppedResults, RefusedFull uint64
}

// Buffer is the agent's disk buffer. It is safe for concurrent use.
type Buffer struct {
	db      *badger.DB
	commits *committer
	log     hclog.Logger
	max     int64
	stopGC  func()

	// delMu serializes deletions (acks and drops), so that the bytes they
	// free are counted once.
	delMu sync.Mutex

	// appends counts the appends between reserve and the end of their
	// write; Close waits for them.
	appends sync.WaitGroup

	// beforeWrite, set by tests, runs between an append's reservation of
	// its sequence number and its write.
	beforeWrite func(seq uint64)

	mu      sync.Mutex
	closed  bool
	events  *queue
	results *queue
	bytes   int64
	dropped uint64
	refused uint64
}

// Open opens (or creates) the buffer in o.Dir and counts what it holds.
func Open(o Options) (*Buffer, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	db, err := badgerutil.Open(badgerutil.Config{Dir: o.Dir, SyncWrites: true, Small: o.Small, Logger: o.Logger.Named("badger")})
	if err != nil {
		return nil, err
	}
	b := &Buffer{db: db, log: o.Logger, max: o.MaxBytes,
		events: newQueue(prefixEvent), results: newQueue(prefixResult)}
	for _, q := range []*queue{b.events, b.results} {
		n, err := q.load(db)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("read buffer: %w", err)
		}
		b.bytes += n
	}
	b.commits = newCommitter(db)
	interval := o.GCInterval
	if interval <= 0 {
		interval = badgerutil.DefaultGCInterval
	}
	b.stopGC = badgerutil.StartGC(db, interval, badgerutil.DefaultGCDiscardRatio, o.Logger.Named("gc"))
	if o.Registerer != nil {
		registerMetrics(o.Registerer, b)
	}
	b.log.Debug("buffer opened", "events", b.events.count, "results", b.results.count, "bytes", b.bytes)
	return b, nil
}

// AppendEvent adds ev at the end of the events. It returns nil once ev is
// fsynced; ErrFull when the events held leave no room for it (after the
// results were dropped).
func (b *Buffer) AppendEvent(ev *raftv1.Event) error {
	data, err := proto.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	return b.append(b.events, ev.GetReceivedUnixMs(), data, true)
}

// AppendResult adds ex at the end of the results, dropping the oldest
// results first when the buffer is full. It refuses (ErrTooLarge) only a
// result larger than the whole buffer. When events fill the buffer, the
// results held shrink to this one: the bound is then exceeded by at most
// one result.
func (b *Buffer) AppendResult(ex *raftv1.Execution) error {
	data, err := proto.Marshal(ex)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	at := ex.GetFinishedUnixMs()
	if at == 0 {
		at = ex.GetSlotUnixMs()
	}
	return b.append(b.results, at, data, false)
}

// append writes one item to q, making room first when needed. refuse says
// whether an item that finds no room is refused (events) or written over
// the bound (results).
func (b *Buffer) append(q *queue, atMs int64, data []byte, refuse bool) error {
	size := entrySize(len(data))
	if size > b.max {
		return ErrTooLarge
	}
	seq, err := b.reserve(q, size, refuse)
	if err != nil {
		return err
	}
	defer b.appends.Done()
	if b.beforeWrite != nil {
		b.beforeWrite(seq)
	}
	err = b.commits.commit(itemKey(q.prefix, seq, atMs, len(data)), data)
	b.mu.Lock()
	delete(q.inflight, seq)
	if err != nil {
		b.bytes -= size
		q.count--
	}
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("write buffer: %w", err)
	}
	return nil
}

// reserve takes a sequence number of q and size bytes of room, dropping
// the oldest results when the room is short.
func (b *Buffer) reserve(q *queue, size int64, refuse bool) (uint64, error) {
	for dropped := false; ; dropped = true {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return 0, ErrClosed
		}
		if b.bytes+size <= b.max || (dropped && !refuse) {
			seq := q.next
			q.next++
			q.inflight[seq] = struct{}{}
			q.count++
			b.bytes += size
			b.appends.Add(1)
			b.mu.Unlock()
			return seq, nil
		}
		if dropped {
			b.refused++
			b.mu.Unlock()
			return 0, ErrFull
		}
		b.mu.Unlock()
		if err := b.dropResults(size); err != nil {
			return 0, err
		}
	}
}

// dropResults deletes the oldest results until size more bytes fit, or no
// result (that is not being written) is left.
func (b *Buffer) dropResults(size int64) error {
	b.delMu.Lock()
	defer b.delMu.Unlock()
	b.mu.Lock()
	need := b.bytes + size - b.max
	upTo := b.results.visible()
	b.mu.Unlock()
	if need <= 0 {
		return nil
	}
	n, freed, err := b.results.deleteUpTo(b.db, upTo, need)
	b.mu.Lock()
	b.results.count -= n
	b.bytes -= freed
	b.dropped += uint64(n)
	b.mu.Unlock()
	if n > 0 {
		b.log.Warn("buffer full: dropped the oldest check results", "dropped", n, "bytes", freed)
	}
	return err
}

// Events returns up to max events, oldest first, of at most maxBytes
// encoded bytes together (the first one is returned whatever its size).
// max or maxBytes 0 means no limit of that kind.
func (b *Buffer) Events(max int, maxBytes int) ([]EventEntry, error) {
	var out []EventEntry
	err := b.read(b.events, max, maxBytes, func(seq uint64, val []byte) error {
		ev := &raftv1.Event{}
		if err := proto.Unmarshal(val, ev); err != nil {
			return fmt.Errorf("decode event %d: %w", seq, err)
		}
		out = append(out, EventEntry{Seq: seq, Event: ev})
		return nil
	})
	return out, err
}

// Results returns up to max results, oldest first, as Events does.
func (b *Buffer) Results(max int, maxBytes int) ([]ResultEntry, error) {
	var out []ResultEntry
	err := b.read(b.results, max, maxBytes, func(seq uint64, val []byte) error {
		ex := &raftv1.Execution{}
		if err := proto.Unmarshal(val, ex); err != nil {
			return fmt.Errorf("decode result %d: %w", seq, err)
		}
		out = append(out, ResultEntry{Seq: seq, Execution: ex})
		return nil
	})
	return out, err
}

// read passes the first items of q to fn, up to the last one whose append
// has returned with every earlier one (so an item is never read after a
// later one).
func (b *Buffer) read(q *queue, max, maxBytes int, fn func(seq uint64, val []byte) error) error {
	// No deletion runs during a read: an item acknowledged is never read
	// again.
	b.delMu.Lock()
	defer b.delMu.Unlock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	upTo := q.visible()
	b.mu.Unlock()
	return q.scan(b.db, upTo, max, maxBytes, fn)
}

// AckEvents deletes the events with Seq <= upTo: the control plane has
// acknowledged them.
func (b *Buffer) AckEvents(upTo uint64) error { return b.ack(b.events, upTo) }

// AckResults deletes the results with Seq <= upTo.
func (b *Buffer) AckResults(upTo uint64) error { return b.ack(b.results, upTo) }

func (b *Buffer) ack(q *queue, upTo uint64) error {
	b.delMu.Lock()
	defer b.delMu.Unlock()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	// Never past an item still being written: it was never read.
	upTo = min(upTo, q.visible())
	b.mu.Unlock()
	n, freed, err := q.deleteUpTo(b.db, upTo, -1)
	b.mu.Lock()
	q.count -= n
	b.bytes -= freed
	b.mu.Unlock()
	return err
}

// Stats returns what the buffer holds now.
func (b *Buffer) Stats() Stats {
	// Under delMu, the oldest item is read while no deletion runs and
	// before Close closes the database.
	b.delMu.Lock()
	defer b.delMu.Unlock()
	b.mu.Lock()
	s := Stats{Events: b.events.count, Results: b.results.count, Bytes: b.bytes, MaxBytes: b.max,
		DroppedResults: b.dropped, RefusedFull: b.refused}
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return s
	}
	for _, q := range []*queue{b.events, b.results} {
		at, err := q.oldest(b.db)
		if err != nil {
			b.log.Warn("read the oldest buffered item", "error", err)
			continue
		}
		if at > 0 && (s.OldestUnixMs == 0 || at < s.OldestUnixMs) {
			s.OldestUnixMs = at
		}
	}
	return s
}

// Close closes the database. Appends still running finish first or fail.
func (b *Buffer) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	b.appends.Wait()
	b.commits.close()
	b.stopGC()
	b.delMu.Lock()
	defer b.delMu.Unlock()
	return b.db.Close()
}
