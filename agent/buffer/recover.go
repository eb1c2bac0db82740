package buffer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/hashicorp/go-hclog"

	"lookout/internal/badgerutil"
)

// When the disk fails under the buffer.
//
// A directory removed under a running Badger goes unnoticed by Badger: its
// open files are still written and fsynced, so an append "succeeds" into
// files that no longer have a name and are gone at the next start. The
// buffer keeps a mark file of its own (sentinelName) in its directory and
// checks, after every group commit and every CheckInterval, that it is
// still the same file. When it is not:
//
//   - appends are refused at once with ErrUnavailable (the local Ingest
//     API answers 503), and one error line is logged;
//   - the buffer recovers: it copies everything the old database still
//     holds (its files are open) into a new database beside it
//     (<dir>.recover), lets the old one close into a re-created <dir>,
//     and puts the copy in its place. Nothing acknowledged is lost, and
//     the sequence numbers go on. Options.Recovered is then called (the
//     agent writes its id and assignments again, in case the whole data
//     dir went). A copy that fails is tried again every CheckInterval.
//
// A write Badger itself refuses (an I/O error, a read-only disk) cannot be
// recovered in the process: the buffer fails (Failed is closed), appends
// are refused, and the agent stops with the error so that its supervisor
// starts it again on whatever the disk then holds.

// DefaultCheckInterval is Options.CheckInterval's default.
const DefaultCheckInterval = 5 * time.Second

// ErrUnavailable is wrapped by the error of an append while the buffer
// cannot store anything durably: its directory was removed (a recovery is
// under way) or a write failed (see Failed).
var ErrUnavailable = errors.New("the buffer cannot store items durably")

// sentinelName is the buffer's mark file in its directory.
const sentinelName = "LOOKOUT-BUFFER"

// recoverSuffix names the directory a recovery copies into.
const recoverSuffix = ".recover"

const sentinelText = "This directory is a Lookout agent's disk buffer. Do not remove it while the agent runs.\n"

// writeSentinel writes the mark file in dir (synced) and returns it.
func writeSentinel(dir string) (os.FileInfo, error) {
	path := filepath.Join(dir, sentinelName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteString(sentinelText); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return os.Stat(path)
}

// Health returns nil while the buffer stores items durably, and otherwise
// why not (wrapping ErrUnavailable).
func (b *Buffer) Health() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.down
}

// Failed is closed once the buffer can no longer store anything and will
// not recover in this process; Health says why. The agent then stops.
func (b *Buffer) Failed() <-chan struct{} { return b.failed }

// checkWrite is the committer's check of every transaction: a commit that
// failed fails the buffer; a directory that is not the buffer's any more
// makes it recover. Either way the appends of the transaction are
// answered with the error: they are not durable.
func (b *Buffer) checkWrite(err error) error {
	if err != nil {
		return b.fail(fmt.Errorf("a write to the buffer in %s failed: %w", b.o.Dir, err))
	}
	if err := b.checkDir(); err != nil {
		return b.lost(err)
	}
	return nil
}

// checkDir tells whether the buffer's directory still holds its mark.
func (b *Buffer) checkDir() error {
	b.mu.Lock()
	want := b.sentinel
	b.mu.Unlock()
	got, err := os.Stat(filepath.Join(b.o.Dir, sentinelName))
	if err != nil || !os.SameFile(want, got) {
		return fmt.Errorf("the buffer's directory %s was removed or emptied while the agent ran", b.o.Dir)
	}
	return nil
}

// fail refuses appends for good and closes Failed; it returns the error
// appends get.
func (b *Buffer) fail(cause error) error {
	b.mu.Lock()
	first := b.down == nil
	if first {
		b.down = fmt.Errorf("%w: %w", ErrUnavailable, cause)
	}
	down := b.down
	b.mu.Unlock()
	b.failedOnce.Do(func() {
		b.log.Error("the buffer FAILED: pings are answered 503 and the agent stops; fix the disk and start it again (what the buffer held is read again then)", "error", cause)
		close(b.failed)
	})
	return down
}

// lost refuses appends until a recovery succeeds, and wakes the watcher
// to recover now; it returns the error appends get.
func (b *Buffer) lost(cause error) error {
	b.mu.Lock()
	first := b.down == nil
	if first {
		b.down = fmt.Errorf("%w: %w (recovering)", ErrUnavailable, cause)
	}
	down := b.down
	b.mu.Unlock()
	if first {
		b.log.Error("the buffer's directory was REMOVED: pings are answered 503 while what it held is moved into a new directory", "dir", b.o.Dir, "error", cause)
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	return down
}

// watch checks the directory every CheckInterval and recovers the buffer
// when it is lost, until Close.
func (b *Buffer) watch() {
	defer close(b.watchDone)
	t := time.NewTicker(b.o.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stopWatch:
			return
		case <-b.failed:
			return
		case <-t.C:
		case <-b.wake:
		}
		select {
		case <-b.failed:
			return
		default:
		}
		b.mu.Lock()
		down := b.down
		b.mu.Unlock()
		if down == nil {
			if err := b.checkDir(); err != nil {
				b.lost(err)
			}
			continue
		}
		held, err := b.recover()
		switch {
		case err == nil:
			b.log.Info("buffer recovered: what the removed directory held is in a new one, pings are accepted again",
				"dir", b.o.Dir, "items", held)
			if b.o.Recovered != nil {
				b.o.Recovered()
			}
		case errors.Is(err, errNotRecovered):
			b.log.Warn("the buffer could not be recovered yet; trying again", "in", b.o.CheckInterval, "error", err)
		default:
			b.fail(err)
			return
		}
	}
}

// errNotRecovered is wrapped by a recovery that failed before the old
// database was closed: it is tried again.
var errNotRecovered = errors.New("not recovered")

// recover moves everything the old database holds into a new directory at
// the buffer's path, and reopens the buffer there. It returns how many
// keys it moved. An error wrapping errNotRecovered left the old database
// in use (the next tick tries again); any other error left the buffer
// without a database.
func (b *Buffer) recover() (int, error) {
	if b.beforeRecover != nil {
		b.beforeRecover()
	}
	// Appends are refused (down is set); let the ones under way finish:
	// they fail, as the directory is not the buffer's.
	b.appends.Wait()
	b.delMu.Lock()
	defer b.delMu.Unlock()
	b.mu.Lock()
	commits, stopGC := b.commits, b.stopGC
	b.commits, b.stopGC = nil, nil
	b.mu.Unlock()
	if commits != nil {
		commits.close()
		stopGC()
	}
	restart := func() {
		b.mu.Lock()
		b.start(b.db)
		b.mu.Unlock()
	}
	dir := b.o.Dir
	tmp := dir + recoverSuffix
	n, err := copyDB(b.db, b.o, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		restart()
		return 0, fmt.Errorf("%w: copy the buffer into %s: %w", errNotRecovered, tmp, err)
	}
	// The old database closes into a directory at its path (Badger
	// flushes its memtable there, and never returns without one); what it
	// writes there is then replaced by the copy.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		os.RemoveAll(tmp)
		restart()
		return 0, fmt.Errorf("%w: re-create %s: %w", errNotRecovered, dir, err)
	}
	b.dbClosed = true
	if !closeLost(b.db, dir, b.log) {
		return 0, fmt.Errorf("the old database in %s did not close; the copy in %s is put in its place at the next start", dir, tmp)
	}
	if err := replaceDir(dir, tmp); err != nil {
		return 0, fmt.Errorf("put the copy %s in place of %s (done at the next start): %w", tmp, dir, err)
	}
	db, err := openDB(b.o)
	if err != nil {
		return 0, fmt.Errorf("reopen the buffer in %s: %w", dir, err)
	}
	sentinel, err := os.Stat(filepath.Join(dir, sentinelName))
	if err != nil {
		db.Close()
		return 0, err
	}
	b.db, b.dbClosed = db, false
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.recount(db); err != nil {
		return 0, err
	}
	b.sentinel = sentinel
	b.start(db)
	b.down = nil
	return n, nil
}

// recount sets the queues' counts and bytes from db, the copy of the
// database they were counted from (appends refused in between are not in
// it). Sequence numbers never go back. Callers hold mu.
func (b *Buffer) recount(db *badger.DB) error {
	b.bytes = 0
	for _, q := range []*queue{b.events, b.results} {
		next := q.next
		q.count = 0
		n, err := q.load(db)
		if err != nil {
			return fmt.Errorf("read buffer: %w", err)
		}
		q.next = max(q.next, next)
		b.bytes += n
	}
	return nil
}

// copyDB copies every key of db into a new database in dir, and marks dir
// as a complete copy (its sentinel, written last).
func copyDB(db *badger.DB, o Options, dir string) (int, error) {
	if err := os.RemoveAll(dir); err != nil {
		return 0, err
	}
	dst, err := badgerutil.Open(badgerutil.Config{Dir: dir, SyncWrites: true, Small: o.Small, Logger: o.Logger.Named("badger")})
	if err != nil {
		return 0, err
	}
	wb := dst.NewWriteBatch()
	n := 0
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if err := wb.Set(it.Item().KeyCopy(nil), v); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err == nil {
		err = wb.Flush()
	} else {
		wb.Cancel()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr // Close syncs what the batch wrote
	}
	if err != nil {
		return 0, err
	}
	if _, err := writeSentinel(dir); err != nil {
		return 0, err
	}
	return n, syncDir(filepath.Dir(dir))
}

// closeLost closes a database whose directory was removed: Badger's close
// flushes its memtable into the directory and retries forever while there
// is none, so dir is made again first, and the close is given up on after
// a while. It tells whether the database closed.
func closeLost(db *badger.DB, dir string, log hclog.Logger) bool {
	os.MkdirAll(dir, 0o700)
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		if err != nil {
			log.Debug("the removed buffer's database closed with an error", "error", err)
		}
		return true
	case <-time.After(30 * time.Second):
		log.Error("the removed buffer's database did not close", "dir", dir)
		return false
	}
}

// replaceDir puts the complete copy tmp in place of dir.
func replaceDir(dir, tmp string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// finishRecovery completes, at Open, a recovery that stopped before its
// copy was in place: a complete copy (with its sentinel) replaces dir, an
// incomplete one is removed.
func finishRecovery(dir string) error {
	tmp := dir + recoverSuffix
	if _, err := os.Stat(filepath.Join(tmp, sentinelName)); err == nil {
		return replaceDir(dir, tmp)
	}
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	return nil
}

// syncDir fsyncs a directory, so that an entry made or renamed in it is
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
