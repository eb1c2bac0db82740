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
	"os"
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
	// CheckInterval is how often the buffer checks that its directory is
	// still there, and retries a recovery that failed (DefaultCheckInterval
	// when 0). Every group commit checks it too.
	CheckInterval time.Duration
	// Recovered, when set, is called after the buffer moved what a removed
	// directory held into a new one (recover.go): the agent writes the
	// rest of its data dir again.
	Recovered func()
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
	o   Options
	log hclog.Logger
	max int64

	// db is guarded by delMu (and swapped only by a recovery, which also
	// holds every append off); commits and stopGC by mu.
	db      *badger.DB
	commits *committer
	stopGC  func()

	// sentinel is the buffer's mark file as Open or the last recovery
	// wrote it (recover.go).
	sentinel os.FileInfo
	// down, when set, is why appends are refused (ErrUnavailable): the
	// directory was removed (a recovery is under way) or a write failed.
	// failed is closed when the buffer cannot recover (Failed).
	down       error
	failed     chan struct{}
	failedOnce sync.Once
	wake       chan struct{} // a recovery is wanted now
	stopWatch  chan struct{}
	watchDone  chan struct{}

	// delMu serializes deletions (acks and drops), so that the bytes they
	// free are counted once.
	delMu sync.Mutex
	// dbClosed: a recovery closed db and could not open its copy (the
	// buffer failed). Guarded by delMu.
	dbClosed bool

	// appends counts the appends between reserve and the end of their
	// write; Close waits for them.
	appends sync.WaitGroup

	// beforeWrite, set by tests, runs between an append's reservation of
	// its sequence number and its write.
	beforeWrite func(seq uint64)
	// beforeRecover, set by tests, runs before a recovery starts.
	beforeRecover func()

	mu      sync.Mutex
	closed  bool
	events  *queue
	results *queue
	bytes   int64
	dropped uint64
	refused uint64
}

// Open opens (or creates) the buffer in o.Dir and counts what it holds.
// A directory Badger cannot open (damaged or foreign files) is an error
// that names it and says what to do; it never panics.
func Open(o Options) (*Buffer, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.GCInterval <= 0 {
		o.GCInterval = badgerutil.DefaultGCInterval
	}
	if o.CheckInterval <= 0 {
		o.CheckInterval = DefaultCheckInterval
	}
	if err := finishRecovery(o.Dir); err != nil {
		return nil, unopenable(o.Dir, err)
	}
	db, err := openDB(o)
	if err != nil {
		return nil, unopenable(o.Dir, err)
	}
	b := &Buffer{o: o, db: db, log: o.Logger, max: o.MaxBytes,
		events: newQueue(prefixEvent), results: newQueue(prefixResult),
		failed: make(chan struct{}), wake: make(chan struct{}, 1),
		stopWatch: make(chan struct{}), watchDone: make(chan struct{})}
	for _, q := range []*queue{b.events, b.results} {
		n, err := q.load(db)
		if err != nil {
			db.Close()
			return nil, unopenable(o.Dir, fmt.Errorf("read buffer: %w", err))
		}
		b.bytes += n
	}
	if b.sentinel, err = writeSentinel(o.Dir); err != nil {
		db.Close()
		return nil, unopenable(o.Dir, err)
	}
	b.start(db)
	go b.watch()
	if o.Registerer != nil {
		registerMetrics(o.Registerer, b)
	}
	b.log.Debug("buffer opened", "events", b.events.count, "results", b.results.count, "bytes", b.bytes)
	return b, nil
}

// openDB opens Badger in o.Dir once its tables checked out: Badger panics,
// in goroutines no recover reaches, on a damaged table.
func openDB(o Options) (*badger.DB, error) {
	c := badgerutil.Config{Dir: o.Dir, SyncWrites: true, Small: o.Small, Logger: o.Logger.Named("badger")}
	if err := badgerutil.CheckTables(c); err != nil {
		return nil, err
	}
	return badgerutil.Open(c)
}

// unopenable is the error of a buffer directory that cannot be opened.
func unopenable(dir string, err error) error {
	return fmt.Errorf("the agent's buffer in %s cannot be opened (%w); move that directory aside and start the agent again "+
		"(it starts with an empty buffer: the pings and results the directory held are not forwarded)", dir, err)
}

// start runs the committer and the value-log GC on db.
func (b *Buffer) start(db *badger.DB) {
	b.commits = newCommitter(db, b.checkWrite)
	b.stopGC = badgerutil.StartGC(db, b.o.GCInterval, badgerutil.DefaultGCDiscardRatio, b.log.Named("gc"))
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
	seq, commits, err := b.reserve(q, size, refuse)
	if err != nil {
		return err
	}
	defer b.appends.Done()
	if b.beforeWrite != nil {
		b.beforeWrite(seq)
	}
	err = commits.commit(itemKey(q.prefix, seq, atMs, len(data)), data)
	b.mu.Lock()
	delete(q.inflight, seq)
	if err != nil {
		b.bytes -= size
		q.count--
	}
	b.mu.Unlock()
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return err
		}
		return fmt.Errorf("write buffer: %w", err)
	}
	return nil
}

// reserve takes a sequence number of q and size bytes of room, dropping
// the oldest results when the room is short. It returns the committer the
// append goes through.
func (b *Buffer) reserve(q *queue, size int64, refuse bool) (uint64, *committer, error) {
	for dropped := false; ; dropped = true {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return 0, nil, ErrClosed
		}
		if b.down != nil {
			err := b.down
			b.mu.Unlock()
			return 0, nil, err
		}
		if b.bytes+size <= b.max || (dropped && !refuse) {
			seq := q.next
			q.next++
			q.inflight[seq] = struct{}{}
			q.count++
			b.bytes += size
			b.appends.Add(1)
			c := b.commits
			b.mu.Unlock()
			return seq, c, nil
		}
		if dropped {
			b.refused++
			b.mu.Unlock()
			return 0, nil, ErrFull
		}
		b.mu.Unlock()
		if err := b.dropResults(size); err != nil {
			return 0, nil, err
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
	if b.dbClosed {
		return b.Health()
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
	if b.dbClosed {
		return b.Health()
	}
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
	if b.dbClosed {
		return b.Health()
	}
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
	if closed || b.dbClosed {
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
// A buffer that failed (Failed) is closed as far as its disk lets it, and
// Close returns why it failed.
func (b *Buffer) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	close(b.stopWatch)
	<-b.watchDone
	b.appends.Wait()
	b.mu.Lock()
	commits, stopGC, down := b.commits, b.stopGC, b.down
	b.mu.Unlock()
	b.delMu.Lock()
	defer b.delMu.Unlock()
	if commits != nil {
		commits.close()
		stopGC()
	}
	switch {
	case b.dbClosed:
		return down
	case down != nil:
		closeLost(b.db, b.o.Dir, b.log)
		return down
	case b.checkDir() != nil:
		// Removed since the last check: Badger's close would wait for the
		// directory forever.
		closeLost(b.db, b.o.Dir, b.log)
		return b.checkDir()
	}
	return b.db.Close()
}
