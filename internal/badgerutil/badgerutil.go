// Package badgerutil holds the Badger settings shared by every database a
// Lookout process opens (the raft log, the replicated state, the agent's
// buffer), so that memory and durability are tuned in one place.
package badgerutil

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"
)

// Config describes one Badger database.
type Config struct {
	// Dir is the directory holding the database; it is created if missing.
	Dir string
	// SyncWrites makes every commit wait for fsync. The raft log needs it;
	// the state machine does not (the raft log makes it durable).
	SyncWrites bool
	// Small trims memtables and caches to a few MB, for tests that run
	// several nodes in one process and for small machines. Without it a
	// database holds at most NumMemtables memtables of Badger's 64 MB and
	// a block cache of BlockCacheSize.
	Small bool
	// Logger receives Badger's own messages (warnings and errors only).
	Logger hclog.Logger
}

// NumMemtables and BlockCacheSize are what a database holds in memory
// without Config.Small, lower than Badger's defaults (5 memtables, 256 MB)
// so that a node fits its default soft memory limit (768 MiB, lookout
// control --memory-limit) with room for a bulk load: the memtable being
// written, two waiting for their flush, and a block cache for what the
// state's own caches (values, lists) do not keep.
const (
	NumMemtables   = 3
	BlockCacheSize = 64 << 20
)

// Options turns a Config into badger.Options.
func Options(c Config) badger.Options {
	// WithLoggingLevel replaces the logger with Badger's own: the adapter
	// comes after it, and keeps Badger's info and debug lines at debug and
	// trace.
	o := badger.DefaultOptions(c.Dir).
		WithSyncWrites(c.SyncWrites).
		WithLoggingLevel(badger.WARNING).
		WithLogger(logAdapter{l: loggerOrNull(c.Logger)}).
		WithNumVersionsToKeep(1).
		WithNumMemtables(NumMemtables).
		WithBlockCacheSize(BlockCacheSize)
	if c.Small {
		o = o.WithMemTableSize(4 << 20).
			WithBlockCacheSize(4 << 20).
			WithIndexCacheSize(2 << 20).
			WithValueLogFileSize(16 << 20).
			WithNumMemtables(2).
			WithNumLevelZeroTables(2).
			WithNumLevelZeroTablesStall(4).
			WithNumCompactors(2).
			WithValueThreshold(1 << 10)
	}
	return o
}

// Open opens (or creates) the database described by c.
func Open(c Config) (*badger.DB, error) {
	db, err := badger.Open(Options(c))
	if err != nil {
		return nil, fmt.Errorf("open badger at %s: %w", c.Dir, err)
	}
	return db, nil
}

func loggerOrNull(l hclog.Logger) hclog.Logger {
	if l == nil {
		return hclog.NewNullLogger()
	}
	return l
}

// logAdapter lets Badger log through hclog.
type logAdapter struct{ l hclog.Logger }

func (a logAdapter) Errorf(f string, v ...any)   { a.l.Error(fmt.Sprintf(f, v...)) }
func (a logAdapter) Warningf(f string, v ...any) { a.l.Warn(fmt.Sprintf(f, v...)) }
func (a logAdapter) Infof(f string, v ...any)    { a.l.Debug(fmt.Sprintf(f, v...)) }
func (a logAdapter) Debugf(f string, v ...any)   { a.l.Trace(fmt.Sprintf(f, v...)) }
