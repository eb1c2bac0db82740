package state

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"

	"lookout/cluster/clusterapi"
)

// backupMagic starts a backup file (lookout admin snapshot save); the last
// byte is the format version. A state snapshot stream (WriteTo) follows,
// then the SHA-256 of everything before it. A file cut short or changed is
// refused by CheckBackup before anything is restored.
var backupMagic = []byte("LOOKOUTBACKUP\x01")

// ErrBadBackup wraps every reason CheckBackup refuses a file.
var ErrBadBackup = errors.New("invalid snapshot file")

// BackupInfo describes a checked backup file.
type BackupInfo struct {
	// AppliedIndex is the raft index the state was saved at.
	AppliedIndex uint64
	// Offset and Size locate the state snapshot stream in the file: what a
	// node restores (cluster.StateMachine.Restore).
	Offset, Size int64
}

// WriteBackup writes snap as a backup file to w: the magic, the snapshot
// stream and its checksum.
func WriteBackup(w io.Writer, snap clusterapi.Snapshot) (int64, error) {
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(w, h)}
	if _, err := cw.Write(backupMagic); err != nil {
		return cw.n, err
	}
	if _, err := snap.WriteTo(cw); err != nil {
		return cw.n, err
	}
	n, err := w.Write(h.Sum(nil))
	return cw.n + int64(n), err
}

// CheckBackup reads a whole backup file from r and checks it: the magic,
// the snapshot's header, every record up to the end mark, the checksum,
// and that nothing follows. Every refusal wraps ErrBadBackup.
func CheckBackup(r io.Reader) (BackupInfo, error) {
	hr := &hashingReader{br: bufio.NewReaderSize(r, 256<<10), h: sha256.New()}
	bad := func(format string, args ...any) (BackupInfo, error) {
		return BackupInfo{}, fmt.Errorf("%w: %s", ErrBadBackup, fmt.Sprintf(format, args...))
	}
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(hr, magic); err != nil || !bytes.Equal(magic, backupMagic) {
		return bad("not a lookout snapshot file, or an unknown version")
	}
	applied, err := SnapshotAppliedIndex(hr)
	if err != nil {
		return bad("%v", err)
	}
	for records := 0; ; records++ {
		key, err := readChunk(hr)
		if err != nil {
			return bad("truncated or damaged after %d records: %v", records, err)
		}
		if len(key) == 0 {
			break
		}
		if _, err := readChunk(hr); err != nil {
			return bad("truncated or damaged after %d records: %v", records, err)
		}
	}
	size := hr.n - int64(len(backupMagic))
	want := hr.h.Sum(nil)
	got := make([]byte, sha256.Size)
	if _, err := io.ReadFull(hr.br, got); err != nil {
		return bad("truncated: the checksum at the end is missing")
	}
	if !bytes.Equal(got, want) {
		return bad("checksum mismatch: the file is damaged")
	}
	if _, err := hr.br.ReadByte(); err != io.EOF {
		return bad("unexpected data after the checksum")
	}
	return BackupInfo{AppliedIndex: applied, Offset: int64(len(backupMagic)), Size: size}, nil
}

// hashingReader hashes and counts what it hands out.
type hashingReader struct {
	br *bufio.Reader
	h  hash.Hash
	n  int64
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.br.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

func (r *hashingReader) ReadByte() (byte, error) {
	b, err := r.br.ReadByte()
	if err == nil {
		r.h.Write([]byte{b})
		r.n++
	}
	return b, err
}
