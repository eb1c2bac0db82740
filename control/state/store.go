// Package state is the replicated state of the control plane, kept in Badger.
//
// Every change arrives as a raft entry (a raftv1.Command) and is applied by
// ApplyBatch, which is deterministic: it reads no clock and no random
// numbers, only the command and the state. Reads are plain Badger reads of
// the local copy; the cluster package decides when a read is consistent.
//
// Keys are ASCII prefixes followed by ids (see keys.go); every write also
// stores the raft index it came from, so a restarted node skips entries it
// has already applied.
package state

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"lookout/internal/badgerutil"
)

// ErrNotFound is returned by reads of something that does not exist.
var ErrNotFound = errors.New("not found")

// Options configures a Store.
type Options struct {
	// Dir is the state directory: the Badger database in use and, during
	// a restore, the one replacing it (generation.go).
	Dir string
	// Small trims Badger's memory use (tests, small machines).
	Small bool
	// Logger is the state's logger.
	Logger hclog.Logger
	// GCInterval is how often value-log GC runs (default
	// badgerutil.DefaultGCInterval).
	GCInterval time.Duration

	// memTableSize overrides Badger's memtable size, which sets the
	// transaction limits (tests of what happens past them).
	memTableSize int64
	// restoreHook is called at each stage of Restore (crash tests).
	restoreHook func(stage string)
}

// Store is the replicated state of one node.
//
// The database in use is one generation of the state directory
// (generation.go). Reads hold it for the duration of a view, so a restore,
// which loads the snapshot into the next generation and swaps it in, never
// closes a database under a reader, and a reader sees the old state or the
// new one, never an empty or half one.
type Store struct {
	cur        atomic.Pointer[generation]
	dir        string
	badgerOpts badger.Options // every generation's, with its own Dir
	gcInterval time.Duration
	closing    sync.WaitGroup // generations being closed after a restore
	log        hclog.Logger

	mu        sync.Mutex
	applied   uint64
	advanced  chan struct{} // closed and replaced whenever applied grows
	closeOnce sync.Once

	watch        *changeWatch
	alertsRaised bool // an entry of the transaction being built raised an alert (FSM goroutine only)
	due          dueFloor

	auth      *authCache
	values    *valueCache // FSM goroutine only
	lists     *listCache  // the accounts' lists, kept by the commits
	authDirty bool        // an entry of the transaction being built changes auth (FSM goroutine only)

	assignDirty bool          // an entry of the transaction being built may change agent assignments (FSM goroutine only)
	assignMu    sync.Mutex    // guards assignCh
	assignCh    chan struct{} // closed and replaced when agent assignments may have changed

	windows broadcast // WindowsChanged (maintenance.go)

	outboxReads atomic.Uint64 // see OutboxReads

	publicDirty bool          // an entry of the transaction being built changes a badge key or status page (FSM goroutine only)
	publicGen   atomic.Uint64 // see PublicGeneration

	channelsDirty bool          // an entry of the transaction being built may change a channel or notification group (FSM goroutine only)
	channelsGen   atomic.Uint64 // see ChannelsGeneration

	restoreHook func(stage string) // tests: called at each stage of Restore
}

// Open opens the state directory, making it if needed, and removes what a
// restore cut short left there. Writes are not synced: the raft log, which
// is, makes them durable.
func Open(o Options) (*Store, error) {
	logger := o.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	bo := badgerutil.Options(badgerutil.Config{Dir: o.Dir, Small: o.Small, Logger: logger.Named("badger")})
	if o.memTableSize > 0 {
		bo = bo.WithMemTableSize(o.memTableSize)
	}
	if o.GCInterval <= 0 {
		o.GCInterval = badgerutil.DefaultGCInterval
	}
	num, err := prepareDir(o.Dir)
	if err != nil {
		return nil, err
	}
	s := &Store{dir: o.Dir, badgerOpts: bo, gcInterval: o.GCInterval, log: logger, advanced: make(chan struct{}),
		auth: newAuthCache(), values: newValueCache(), lists: newListCache(), watch: newChangeWatch(), assignCh: make(chan struct{}),
		restoreHook: o.restoreHook}
	g, err := s.openGeneration(num)
	if err != nil {
		return nil, err
	}
	err = g.db.View(func(txn *badger.Txn) error {
		s.applied, err = readUint64(txn, keyApplied)
		return err
	})
	if err != nil {
		g.db.Close()
		return nil, fmt.Errorf("read applied index: %w", err)
	}
	s.startGC(g)
	s.cur.Store(g)
	return s, nil
}

// Close closes the database, once no reader holds it (a view ends; a
// snapshot is released), and waits for the databases a restore replaced
// to be closed too.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		g := s.cur.Load()
		g.retire()
		<-g.idle
		err = g.close()
		s.closing.Wait()
	})
	return err
}

// AppliedIndex is the raft index of the last entry applied to this state.
func (s *Store) AppliedIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

// WaitApplied blocks until the state has applied index or ctx ends.
func (s *Store) WaitApplied(ctx context.Context, index uint64) error {
	for {
		s.mu.Lock()
		applied, ch := s.applied, s.advanced
		s.mu.Unlock()
		if applied >= index {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("wait for index %d (applied %d): %w", index, applied, ctx.Err())
		}
	}
}

func (s *Store) setApplied(index uint64) {
	if s.authDirty {
		s.auth.invalidate()
		s.authDirty = false
	}
	if s.assignDirty {
		s.assignDirty = false
		defer s.signalAssignments()
	}
	if s.publicDirty {
		s.publicDirty = false
		s.publicGen.Add(1)
	}
	if s.channelsDirty {
		s.channelsDirty = false
		s.channelsGen.Add(1)
	}
	defer s.windows.publish()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied = index
	close(s.advanced)
	s.advanced = make(chan struct{})
}

// view runs fn in a read transaction of the database in use, which it
// holds meanwhile.
func (s *Store) view(fn func(txn *badger.Txn) error) error {
	g, err := s.acquire()
	if err != nil {
		return err
	}
	defer g.release()
	return g.db.View(fn)
}

// getProto reads key into m; ErrNotFound when the key is absent.
func getProto(txn *badger.Txn, key []byte, m proto.Message) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("get %q: %w", key, err)
	}
	return item.Value(func(v []byte) error {
		if err := proto.Unmarshal(v, m); err != nil {
			return fmt.Errorf("decode %q: %w", key, err)
		}
		return nil
	})
}

// getRaw reads key's value; ErrNotFound when absent.
func getRaw(txn *badger.Txn, key []byte) ([]byte, error) {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", key, err)
	}
	return item.ValueCopy(nil)
}

// exists tells whether key is present.
func exists(txn *badger.Txn, key []byte) (bool, error) {
	_, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %q: %w", key, err)
	}
	return true, nil
}

// setProto writes m under key with a deterministic encoding.
func setProto(txn *badger.Txn, key []byte, m proto.Message) error {
	v, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	return txn.Set(key, v)
}

// scanProto calls fn for every record under prefix, in key order.
func scanProto[M proto.Message](txn *badger.Txn, prefix []byte, newM func() M, fn func(M) error) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		m := newM()
		err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, m) })
		if err != nil {
			return fmt.Errorf("decode %q: %w", it.Item().Key(), err)
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}
