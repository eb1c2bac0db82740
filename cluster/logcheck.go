package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/raft"
)

// logRepair is what an operator does about a raft log that cannot be read;
// docs/reliability.md has the procedure.
const logRepair = `stop the node and move its data directory aside, then start it again with the same flags: ` +
	`it rejoins and catches up from the leader (on a single node, restore a snapshot instead: lookout admin snapshot restore); ` +
	`see "A node that cannot read its raft log" in docs/reliability.md`

// logError is a raft log this node cannot use: the directory, the file and
// entry when known, and what to do.
type logError struct {
	dir   string
	file  string // the segment file, when the entry's is known
	index uint64 // the entry that cannot be read (0: the log does not open)
	err   error
}

func (e *logError) Error() string {
	where := "raft log " + e.dir
	if e.index > 0 {
		where = fmt.Sprintf("raft log entry %d in %s", e.index, e.dir)
		if e.file != "" {
			where = fmt.Sprintf("raft log entry %d in %s", e.index, e.file)
		}
	}
	return fmt.Sprintf("%s cannot be read (%v); %s", where, e.err, logRepair)
}

func (e *logError) Unwrap() error { return e.err }

// verifyLog reads every entry of the log in dir once before raft starts
// on it. Raft panics at start on an entry it cannot read, which under a
// supervisor is a restart loop of stack traces; this is one error that
// says which file and what to do. Raft reads the entries after its newest
// snapshot at start anyway, so this at most doubles that read.
func verifyLog(logs raft.LogStore, dir string) error {
	first, err := logs.FirstIndex()
	if err != nil {
		return &logError{dir: dir, err: err}
	}
	last, err := logs.LastIndex()
	if err != nil {
		return &logError{dir: dir, err: err}
	}
	if last == 0 {
		return nil
	}
	var l raft.Log
	for i := first; i <= last; i++ {
		if err := logs.GetLog(i, &l); err != nil {
			return &logError{dir: dir, file: segmentFile(dir, i), index: i, err: err}
		}
		if l.Index != i {
			return &logError{dir: dir, file: segmentFile(dir, i), index: i, err: fmt.Errorf("read as entry %d", l.Index)}
		}
	}
	return nil
}

// segmentFile is the path of the raft-wal segment file that holds index
// in dir: the one with the greatest base index not above it (segment files
// are named BASEINDEX-ID.wal), or "" when none does.
func segmentFile(dir string, index uint64) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var best string
	var bestBase uint64
	for _, e := range entries {
		name := e.Name()
		base, _, ok := strings.Cut(strings.TrimSuffix(name, ".wal"), "-")
		if !strings.HasSuffix(name, ".wal") || !ok {
			continue
		}
		b, err := strconv.ParseUint(base, 10, 64)
		if err != nil || b > index || (best != "" && b < bestBase) {
			continue
		}
		best, bestBase = name, b
	}
	if best == "" {
		return ""
	}
	return filepath.Join(dir, best)
}
