package cluster

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
)

// logDirWAL is the raft log and stable store's directory in the data
// directory: hashicorp/raft-wal's segment files, appended to and fsynced
// once per append, and its small metadata database (raft's term and vote).
const logDirWAL = "raft-wal"

// segmentSize is raft-wal's segment file size: set, or 64 MiB (raft-wal's
// default), or 4 MiB for small nodes (tests, small machines).
func segmentSize(small bool, set int) int {
	switch {
	case set > 0:
		return set
	case small:
		return 4 << 20
	}
	return 64 << 20
}

// openLogStore opens the node's raft log and stable store in dataDir,
// making it on a new node, and reads every entry once (verifyLog): a log
// that cannot be opened or read is a logError that says what to do.
func openLogStore(dataDir string, segment int, log hclog.Logger) (*walStore, error) {
	dir := filepath.Join(dataDir, logDirWAL)
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create raft log dir: %w", err)
		}
		if err := syncDir(dataDir); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, &logError{dir: dir, err: err}
	}
	w, err := openWAL(dir, segment, log)
	if err != nil {
		return nil, &logError{dir: dir, err: err}
	}
	if err := verifyLog(w, dir); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// walStore is the raft log and stable store: raft-wal's WAL, which closes
// its metadata database with itself.
type walStore = wal.WAL

// openWAL opens (or makes) the WAL in the existing directory dir.
func openWAL(dir string, segment int, log hclog.Logger) (*walStore, error) {
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(dir, wal.WithLogger(log), wal.WithSegmentSize(segment), wal.WithMetaStore(meta))
	if err != nil {
		meta.Close()
		return nil, err
	}
	return w, nil
}

// syncDir makes a new entry in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// The WAL is raft's log and stable store.
var (
	_ raft.LogStore    = (*walStore)(nil)
	_ raft.StableStore = (*walStore)(nil)
)
