package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/dgraph-io/badger/v4"

	"lookout/cluster/clusterapi"
)

// snapshotMagic starts every snapshot stream; the last byte is the format
// version. The applied index follows it as 8 big-endian bytes.
var snapshotMagic = []byte("LOOKOUTSNAP\x01")

// Snapshot is a point-in-time view of the state, taken without blocking
// writers: it holds a Badger read transaction until Release.
type Snapshot struct {
	txn     *badger.Txn
	applied uint64
}

// Snapshot opens a consistent view of the state as of the last applied
// entry (a *Snapshot). The caller must Release it.
func (s *Store) Snapshot() (clusterapi.Snapshot, error) {
	txn := s.db.NewTransaction(false)
	applied, err := readUint64(txn, keyApplied)
	if err != nil {
		txn.Discard()
		return nil, fmt.Errorf("read applied index: %w", err)
	}
	return &Snapshot{txn: txn, applied: applied}, nil
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

// Release ends the view.
func (sn *Snapshot) Release() { sn.txn.Discard() }

// Restore replaces the whole state with the snapshot read from r: the
// database is wiped, then loaded in large write batches. The applied index
// comes from the snapshot.
//
// It is crash-safe: the applied index is written last, in its own
// transaction, after every other key is flushed and synced. A restore cut
// short (a broken stream, a crash) leaves a database whose applied index
// is 0 (DropAll wiped it), never the snapshot's, so the node knows its
// state is behind the snapshot and restores it again at start
// (cluster's catchUpFromSnapshot) instead of running on half a state.
func (s *Store) Restore(r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	applied, err := SnapshotAppliedIndex(br)
	if err != nil {
		return err
	}
	s.values.reset()
	if err := s.db.DropAll(); err != nil {
		return fmt.Errorf("wipe state: %w", err)
	}
	// Empty now: say so, so that a load that fails midway never leaves an
	// applied index standing over missing data (or cached keys).
	s.authDirty = true
	s.setApplied(0)
	if err := s.load(br); err != nil {
		return err
	}
	// Everything else is on disk: now the applied index (absent in the
	// snapshot of an empty state).
	if applied > 0 {
		err = s.db.Update(func(txn *badger.Txn) error { return txn.Set(keyApplied, u64(applied)) })
		if err == nil {
			err = s.db.Sync()
		}
	}
	if err != nil {
		return fmt.Errorf("write restored applied index: %w", err)
	}
	s.authDirty, s.assignDirty = true, true
	s.values.reset()
	s.watch.publish(nil, false, true) // every monitor may have changed
	s.setApplied(applied)
	return nil
}

// load writes the key-value records of a snapshot stream (after its
// header), but its applied index, and syncs them to disk.
func (s *Store) load(br *bufio.Reader) error {
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
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
		if bytes.Equal(key, keyApplied) {
			continue // written last, by Restore
		}
		if err := wb.Set(key, val); err != nil {
			return fmt.Errorf("load snapshot: %w", err)
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("load snapshot: %w", err)
	}
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("sync restored state: %w", err)
	}
	return nil
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
