package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/migrate"

	"lookout/cluster/raftbadger"
)

// The raft log and stable store live in raft-wal (hashicorp/raft-wal):
// segment files appended to and fsynced once per append, where the Badger
// store before it synced two files per append (its memtable's log and its
// value log). Data directories from before hold that Badger store in
// logDirBadger; openLogStore copies it over once.
const (
	logDirWAL     = "raft-wal"
	logDirWALTemp = "raft-wal.tmp"
	logDirBadger  = "raft"
)

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

// openLogStore opens the node's raft log and stable store in dataDir. A
// Badger store left by an earlier release is copied into a new WAL first:
// the copy is written in a temporary directory and renamed into place when
// complete, so a crash midway leaves the Badger store as it was and the
// copy starts again at the next start; the Badger store is removed once the
// WAL is in place.
func openLogStore(dataDir string, segment int, log hclog.Logger) (*walStore, error) {
	dir := filepath.Join(dataDir, logDirWAL)
	old := filepath.Join(dataDir, logDirBadger)
	_, err := os.Stat(dir)
	switch {
	case err == nil:
		// In place; a Badger store still there was copied before a crash.
		if err := os.RemoveAll(old); err != nil {
			return nil, fmt.Errorf("remove the copied Badger raft store: %w", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("raft log: %w", err)
	default:
		_, err := os.Stat(old)
		switch {
		case err == nil:
			if err := migrateBadgerLog(dataDir, segment, log); err != nil {
				return nil, err
			}
		case !errors.Is(err, fs.ErrNotExist):
			// Not a new node: starting with an empty log would lose it.
			return nil, fmt.Errorf("raft log (Badger store): %w", err)
		default:
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("create raft log dir: %w", err)
			}
			if err := syncDir(dataDir); err != nil {
				return nil, err
			}
		}
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

// migrateBadgerLog copies the Badger store's log entries and raft's stable
// keys into a WAL made in logDirWALTemp, renames it to logDirWAL and removes
// the Badger store.
func migrateBadgerLog(dataDir string, segment int, log hclog.Logger) error {
	tmp := filepath.Join(dataDir, logDirWALTemp)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove an unfinished raft log copy: %w", err)
	}
	if err := copyBadgerLog(tmp, filepath.Join(dataDir, logDirBadger), segment, log); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dataDir, logDirWAL)); err != nil {
		return fmt.Errorf("move the copied raft log into place: %w", err)
	}
	if err := syncDir(dataDir); err != nil {
		return err
	}
	log.Info("raft log copied from the Badger store into raft-wal", "dir", filepath.Join(dataDir, logDirWAL))
	return os.RemoveAll(filepath.Join(dataDir, logDirBadger))
}

// copyBadgerLog copies the Badger store in from into a new WAL in to, and
// closes both.
func copyBadgerLog(to, from string, segment int, log hclog.Logger) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return fmt.Errorf("create raft log dir: %w", err)
	}
	// Read once: small tables do.
	src, err := raftbadger.Open(raftbadger.Options{Dir: from, Small: true, Logger: log.Named("badger")})
	if err != nil {
		return fmt.Errorf("open the Badger raft store to copy: %w", err)
	}
	dst, err := openWAL(to, segment, log)
	if err != nil {
		src.Close()
		return fmt.Errorf("create raft log: %w", err)
	}
	err = copyLogStore(dst, src)
	if cerr := dst.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close the copied raft log: %w", cerr)
	}
	src.Close()
	if err != nil {
		return fmt.Errorf("copy the Badger raft store: %w", err)
	}
	return nil
}

// copyLogStore copies every log entry and raft's stable keys from src to
// the empty dst.
func copyLogStore(dst *walStore, src *raftbadger.Store) error {
	// raft's own keys (raft.go), the only ones it keeps; an unset one (no
	// vote yet) is not copied.
	for _, k := range []string{"CurrentTerm", "LastVoteTerm"} {
		v, err := src.GetUint64([]byte(k))
		if err == nil && v != 0 {
			err = dst.SetUint64([]byte(k), v)
		}
		if err != nil && err.Error() != "not found" {
			return fmt.Errorf("copy %s: %w", k, err)
		}
	}
	if v, err := src.Get([]byte("LastVoteCand")); err == nil {
		if err := dst.Set([]byte("LastVoteCand"), v); err != nil {
			return fmt.Errorf("copy LastVoteCand: %w", err)
		}
	} else if err.Error() != "not found" {
		return fmt.Errorf("copy LastVoteCand: %w", err)
	}
	last, err := src.LastIndex()
	if err != nil || last == 0 { // no entries: nothing to copy
		return err
	}
	return migrate.CopyLogs(context.Background(), dst, src, 1<<20, nil)
}

// syncDir makes a rename in dir durable.
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
