package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/ristretto/v2/z"

	"lookout/cluster/clusterapi"
)

// snapshotMagic starts every snapshot stream; the last byte is the format
// version. The applied index follows it as 8 big-endian bytes.
var snapshotMagic = []byte("LOOKOUTSNAP\x01")

// Snapshot is a point-in-time view of the state, taken without blocking
// writers: it holds a Badger read transaction, and the database it reads,
// until Release.
type Snapshot struct {
	gen     *generation
	txn     *badger.Txn
	applied uint64
}

// Snapshot opens a consistent view of the state as of the last applied
// entry (a *Snapshot). The caller must Release it: until then, a restore
// keeps the database it reads open beside the new one.
func (s *Store) Snapshot() (clusterapi.Snapshot, error) {
	g, err := s.acquire()
	if err != nil {
		return nil, err
	}
	txn := g.db.NewTransaction(false)
	applied, err := readUint64(txn, keyApplied)
	if err != nil {
		txn.Discard()
		g.release()
		return nil, fmt.Errorf("read applied index: %w", err)
	}
	return &Snapshot{gen: g, txn: txn, applied: applied}, nil
}

// AppliedIndex is the raft index the view reflects.
func (sn *Snapshot) AppliedIndex() uint64 { return sn.applied }

// WriteTo streams every key and value of the view to w: magic, the applied
// index, then (uvarint key length, key, uvarint value length, value)
// records, then a zero key length.
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := &countingWriter{w: bw}
	if _, err := cw.Write(snapshotMagic); err != nil {
		return cw.n, err
	}
	if _, err := cw.Write(u64(sn.applied)); err != nil {
		return cw.n, err
	}
	it := sn.txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 100})
	defer it.Close()
	var lenBuf [binary.MaxVarintLen64]byte
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		key := item.Key()
		err := item.Value(func(v []byte) error {
			for _, b := range [][]byte{key, v} {
				n := binary.PutUvarint(lenBuf[:], uint64(len(b)))
				if _, err := cw.Write(lenBuf[:n]); err != nil {
					return err
				}
				if _, err := cw.Write(b); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return cw.n, fmt.Errorf("snapshot key %q: %w", key, err)
		}
	}
	if _, err := cw.Write([]byte{0}); err != nil {
		return cw.n, err
	}
	return cw.n, bw.Flush()
}

// Release ends the view. It must be called once.
func (sn *Snapshot) Release() {
	sn.txn.Discard()
	sn.gen.release()
}

// Restore replaces the whole state with the snapshot read from r. It runs
// on the FSM goroutine, like ApplyBatch (or before raft starts).
//
// The snapshot is loaded into the next generation of the state directory,
// beside the database in use, which readers go on reading meanwhile. Once
// it is loaded, synced and closed, CURRENT is pointed at it (rename and
// fsync), and it is swapped in: readers that start after the swap read
// it, those before it finish on the old database, which is closed and
// removed once the last of them lets go. So a request sees the old state or
// the new one, never an empty or half state, and no database is closed
// under a reader. A snapshot that raft is still persisting keeps the old
// database open (disk and memory) until it ends; the swap does not wait
// for it.
//
// It is crash-safe. A restore that fails or is cut short (a broken
// stream, a crash) before the rename leaves the old state in use, with its
// own applied index, below the snapshot's; Open removes the half-loaded
// generation, and the node restores the snapshot again at start (cluster's
// catchUpFromSnapshot) since its state is behind it. After the rename the
// new state is whole on disk, and Open removes the old one.
func (s *Store) Restore(r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	applied, err := SnapshotAppliedIndex(br)
	if err != nil {
		return err
	}
	old := s.cur.Load()
	// Two databases are open while the new one loads, each with its
	// memtables and block cache: more than a node's soft memory limit
	// (--memory-limit) leaves room for. Near the limit the collector would
	// take the CPU that raft's heartbeats need, so the limit is lifted
	// until the load is over; the process gives the memory back after.
	limit := debug.SetMemoryLimit(math.MaxInt64)
	next, err := s.loadGeneration(old.num+1, br, applied)
	debug.SetMemoryLimit(limit)
	if err != nil {
		return err
	}
	s.hook("loaded")
	if err := writeCurrent(s.dir, next.num); err != nil {
		// Whatever CURRENT names now is what a restart opens.
		if num, rerr := readCurrent(s.dir); rerr != nil || num != next.num {
			next.close()
			os.RemoveAll(next.dir)
			return err
		}
		s.log.Error("the restored state is in use, but may not be after a crash of the machine", "error", err)
	}
	s.hook("pointed")
	s.startGC(next)
	s.values.reset()
	s.cur.Store(next)
	// After the swap, so a reader that cached an old answer has it dropped,
	// and one that reads the generation after the invalidation reads the
	// new state.
	s.auth.invalidate()
	s.lists.reset()
	s.authDirty, s.assignDirty, s.publicDirty, s.channelsDirty = false, true, true, true
	s.windows.dirty = true
	s.due.lower(nil)
	s.watch.publish(nil, false, true) // every monitor may have changed
	s.setApplied(applied)
	s.retireGeneration(old, true)
	return nil
}

// loadGeneration makes generation num from the key-value records of a
// snapshot stream (after its header) and the applied index, and returns it
// open once everything is on disk. On an error it removes what it wrote.
func (s *Store) loadGeneration(num uint64, br *bufio.Reader, applied uint64) (*generation, error) {
	dir := filepath.Join(s.dir, genName(num))
	if err := os.RemoveAll(dir); err != nil { // a leftover of a restore that failed
		return nil, fmt.Errorf("clear %s: %w", dir, err)
	}
	g, err := s.openGenerationWith(num, loadOptions(s.badgerOpts))
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*generation, error) {
		g.close()
		os.RemoveAll(dir)
		return nil, err
	}
	if err := load(g.db, br, applied); err != nil {
		return fail(err)
	}
	// Closing flushes every memtable to synced tables: the generation is
	// whole on disk before CURRENT may name it.
	if err := g.close(); err != nil {
		return fail(fmt.Errorf("close restored state: %w", err))
	}
	if g, err = s.openGeneration(num); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return g, nil
}

// loadOptions are the Badger options of a generation while a snapshot
// loads into it. Badger's stream writer builds the tables of the last
// level, and holds each whole in memory until it is on disk, up to 17 at
// a time: at that level's table size (64 MiB with Badger's defaults) a
// load would take more than a GiB beside the state in use. Tables of
// loadTableBytes keep it to a few hundred MiB; the generation is opened
// again with the usual options once loaded, and its later compactions
// write tables of the usual size.
func loadOptions(o badger.Options) badger.Options {
	o = o.WithBaseTableSize(loadTableBytes)
	o.TableSizeMultiplier = 1
	return o
}

// loadTableBytes is the size of the tables a snapshot loads into.
const loadTableBytes = 4 << 20

// loadBatchBytes is about how much of the stream load hands Badger's
// stream writer at a time.
const loadBatchBytes = 4 << 20

// load writes the key-value records of a snapshot stream (after its
// header) into db, an empty database, the applied index in place of the
// one they hold. A snapshot holds its keys in order, once each (it is read
// from one Badger iterator), so they go to Badger's stream writer, which
// builds the tables of the last level directly: no memtable, no
// compaction. A stream whose keys are out of order is an error, before
// the stream writer sees the key (it would panic).
func load(db *badger.DB, br *bufio.Reader, applied uint64) error {
	sw := db.NewStreamWriter()
	defer sw.Cancel()
	if err := sw.Prepare(); err != nil {
		return fmt.Errorf("load snapshot: %w", err)
	}
	buf := z.NewBuffer(loadBatchBytes+loadBatchBytes/4, "state.load")
	defer buf.Release()
	var last []byte
	put := func(key, val []byte) error {
		if last != nil && bytes.Compare(key, last) <= 0 {
			return fmt.Errorf("load snapshot: key %q is out of order (after %q)", key, last)
		}
		last = key
		badger.KVToBuffer(&pb.KV{Key: key, Value: val, Version: 1}, buf)
		if buf.LenNoPadding() < loadBatchBytes {
			return nil
		}
		// Write copies what it keeps, so the buffer is used again.
		if err := sw.Write(buf); err != nil {
			return fmt.Errorf("load snapshot: %w", err)
		}
		buf.Reset()
		return nil
	}
	putApplied := applied > 0 // absent in the snapshot of an empty state
	for {
		key, err := readChunk(br)
		if err != nil {
			return fmt.Errorf("read snapshot key: %w", err)
		}
		if len(key) == 0 {
			break
		}
		val, err := readChunk(br)
		if err != nil {
			return fmt.Errorf("read snapshot value: %w", err)
		}
		c := bytes.Compare(key, keyApplied)
		if c >= 0 && putApplied {
			// The header's applied index, where its key sorts.
			if err := put(keyApplied, u64(applied)); err != nil {
				return err
			}
			putApplied = false
		}
		if c == 0 {
			continue
		}
		if err := put(key, val); err != nil {
			return err
		}
	}
	if putApplied {
		if err := put(keyApplied, u64(applied)); err != nil {
			return err
		}
	}
	if err := sw.Write(buf); err != nil {
		return fmt.Errorf("load snapshot: %w", err)
	}
	if err := sw.Flush(); err != nil {
		return fmt.Errorf("load snapshot: %w", err)
	}
	return nil
}

// hook calls the test hook of a Restore stage.
func (s *Store) hook(stage string) {
	if s.restoreHook != nil {
		s.restoreHook(stage)
	}
}

// SnapshotAppliedIndex is the package function SnapshotAppliedIndex, for
// the node (cluster.StateMachine).
func (s *Store) SnapshotAppliedIndex(r io.Reader) (uint64, error) { return SnapshotAppliedIndex(r) }

// SnapshotAppliedIndex reads the header of a snapshot stream and returns
// the applied index it was taken at. Restore uses it, and a starting node
// uses it to tell whether its state is behind its newest snapshot.
func SnapshotAppliedIndex(r io.Reader) (uint64, error) {
	hdr := make([]byte, len(snapshotMagic)+8)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return 0, fmt.Errorf("read snapshot header: %w", err)
	}
	if string(hdr[:len(snapshotMagic)]) != string(snapshotMagic) {
		return 0, errors.New("not a lookout state snapshot, or an unknown version")
	}
	return binary.BigEndian.Uint64(hdr[len(snapshotMagic):]), nil
}

// readChunk reads one length-prefixed chunk of a snapshot stream.
func readChunk(r interface {
	io.Reader
	io.ByteReader
}) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > 64<<20 {
		return nil, fmt.Errorf("chunk of %d bytes is too large", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the length was read: the body is missing
		}
		return nil, err
	}
	return b, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
