package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// mustOpenLogStore opens the log store of dataDir as a small node does.
func mustOpenLogStore(t *testing.T, dataDir string) *walStore {
	t.Helper()
	w, err := openLogStore(dataDir, 4<<20, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestUnreadableLogDirStopsTheNode: a raft-wal/ that cannot be looked at (a
// symlink to itself) is not a new node's, so it is an error, not an empty
// log made in its place.
func TestUnreadableLogDirStopsTheNode(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(logDirWAL, filepath.Join(dir, logDirWAL)); err != nil {
		t.Fatal(err)
	}
	w, err := openLogStore(dir, 4<<20, hclog.NewNullLogger())
	if err == nil {
		w.Close()
		t.Fatal("opened a log store in a directory it could not read")
	}
	if !strings.Contains(err.Error(), "move its data directory aside") {
		t.Fatalf("error %q does not say what to do", err)
	}
}
