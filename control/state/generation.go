package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"

	"lookout/internal/badgerutil"
)

// The state directory holds one Badger database per generation, in
// gen-<n>, and a file CURRENT naming the generation in use. A restore
// loads the snapshot into the next generation beside the one in use and
// then points CURRENT at it (a new file renamed over the old one, both
// synced): that rename is the moment the restore happens on disk, so a
// crash before it leaves the old generation in use, and a crash after it
// the new one, whole. Open removes every other generation, the leftovers
// of a restore cut short or of an old generation not yet removed.
const (
	currentFile = "CURRENT"
	genPrefix   = "gen-"
)

// ErrClosed is returned by reads of a closed Store.
var ErrClosed = errors.New("state is closed")

// generation is one Badger database of the state directory, counted by
// the readers that hold it, so that a restore can swap in the next
// generation while reads of this one go on, and close it once the last of
// them (a view, a snapshot being persisted) has let go.
type generation struct {
	num    uint64
	dir    string
	db     *badger.DB
	stopGC func()

	refs     atomic.Int64
	retired  atomic.Bool
	idleOnce sync.Once
	idle     chan struct{} // closed once retired and no reader holds it
}

// hold takes a reference unless the generation is retired.
func (g *generation) hold() bool {
	g.refs.Add(1)
	if g.retired.Load() {
		g.release()
		return false
	}
	return true
}

// release drops a reference taken by hold.
func (g *generation) release() {
	if g.refs.Add(-1) == 0 && g.retired.Load() {
		g.idleOnce.Do(func() { close(g.idle) })
	}
}

// retire refuses further references; idle closes once the held ones are
// released.
func (g *generation) retire() {
	g.retired.Store(true)
	if g.refs.Load() == 0 {
		g.idleOnce.Do(func() { close(g.idle) })
	}
}

// acquire holds the generation in use; the caller releases it. A reader
// that raced a swap (it loaded the generation just retired) tries again
// with its successor; a retired generation still in use means the Store
// is closed.
func (s *Store) acquire() (*generation, error) {
	for {
		g := s.cur.Load()
		if g.hold() {
			return g, nil
		}
		if s.cur.Load() == g {
			return nil, ErrClosed
		}
	}
}

// db is the database in use. Only the FSM goroutine (ApplyBatch, Restore),
// which alone swaps generations, may use it without holding it.
func (s *Store) db() *badger.DB { return s.cur.Load().db }

// openGeneration opens (creating it if needed) the database of generation
// num with the store's options; startGC starts its value-log GC.
func (s *Store) openGeneration(num uint64) (*generation, error) {
	return s.openGenerationWith(num, s.badgerOpts)
}

// openGenerationWith opens generation num with the options o (their
// directories set to its own).
func (s *Store) openGenerationWith(num uint64, o badger.Options) (*generation, error) {
	dir := filepath.Join(s.dir, genName(num))
	db, err := badger.Open(o.WithDir(dir).WithValueDir(dir))
	if err != nil {
		return nil, fmt.Errorf("open badger at %s: %w", dir, err)
	}
	return &generation{num: num, dir: dir, db: db, stopGC: func() {}, idle: make(chan struct{})}, nil
}

// startGC runs value-log GC on g until it is closed.
func (s *Store) startGC(g *generation) {
	g.stopGC = badgerutil.StartGC(g.db, s.gcInterval, badgerutil.DefaultGCDiscardRatio, s.log.Named("gc"))
}

// retireGeneration takes g out of use: once no reader holds it, it is
// closed, and its directory removed when remove is set. It does not wait:
// a snapshot of g that raft is still persisting keeps g open until it is
// released, and Close waits for that.
func (s *Store) retireGeneration(g *generation, remove bool) {
	g.retire()
	s.closing.Add(1)
	go func() {
		defer s.closing.Done()
		<-g.idle
		if err := g.close(); err != nil {
			s.log.Error("close the previous state database", "dir", g.dir, "error", err)
		}
		if remove {
			if err := os.RemoveAll(g.dir); err != nil {
				s.log.Error("remove the previous state database", "dir", g.dir, "error", err)
			}
		}
	}()
}

// close stops g's GC and closes its database.
func (g *generation) close() error {
	g.stopGC()
	return g.db.Close()
}

// genName is the directory name of generation num.
func genName(num uint64) string { return genPrefix + strconv.FormatUint(num, 10) }

// prepareDir makes dir a state directory if it is not one yet, removes
// what is not the generation in use and returns that generation.
func prepareDir(dir string) (uint64, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("create state directory: %w", err)
	}
	num, err := readCurrent(dir)
	if errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err == nil {
			return 0, fmt.Errorf("%s holds a Badger database of its own, not a state directory (a %s file naming a generation directory)", dir, currentFile)
		}
		num = 1
		err = writeCurrent(dir, num)
	}
	if err != nil {
		return 0, err
	}
	if num > 1 {
		if _, err := os.Stat(filepath.Join(dir, genName(num))); err != nil {
			return 0, fmt.Errorf("%s names %s, which cannot be read: %w", filepath.Join(dir, currentFile), genName(num), err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("read state directory: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == genName(num) || (!strings.HasPrefix(name, genPrefix) && name != currentFile+".tmp") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return 0, fmt.Errorf("remove a leftover state database: %w", err)
		}
	}
	return num, nil
}

// readCurrent reads the generation CURRENT names.
func readCurrent(dir string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(dir, currentFile))
	if err != nil {
		return 0, err
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), genPrefix)
	num, err := strconv.ParseUint(s, 10, 64)
	if !ok || err != nil || num == 0 {
		return 0, fmt.Errorf("%s is damaged: %q", filepath.Join(dir, currentFile), b)
	}
	return num, nil
}

// writeCurrent points CURRENT at generation num, durably and atomically:
// a new file, synced, renamed over the old one, then the directory synced.
func writeCurrent(dir string, num uint64) error {
	tmp := filepath.Join(dir, currentFile+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	_, err = f.WriteString(genName(num) + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, currentFile))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("point the state at %s: %w", genName(num), err)
	}
	return syncDir(dir)
}

// syncDir makes the entries of dir durable (a rename in it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
