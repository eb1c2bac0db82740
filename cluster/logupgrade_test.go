package cluster_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/migrate"

	"lookout/cluster/clustertest"
	"lookout/cluster/raftbadger"
)

// TestNodeFromBadgerRaftStoreKeepsItsLog starts a node on a data directory
// as an earlier release left it (the raft log in a Badger store in raft/)
// with no state, so everything the node knows afterwards came through the
// copied log.
func TestNodeFromBadgerRaftStoreKeepsItsLog(t *testing.T) {
	c := clustertest.NewCluster(t, 1)
	var ids []string
	for range 5 {
		id := uuid.NewString()
		mustApply(t, c.Nodes[0], createAccount(id))
		ids = append(ids, id)
	}
	c.Kill(0)
	dir := c.Nodes[0].DataDir()
	toBadgerLog(t, dir)
	if err := os.RemoveAll(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}

	c.Restart(0)
	c.Leader(10 * time.Second)
	requireAccounts(t, c.Nodes[0], ids)
	id := uuid.NewString()
	mustApply(t, c.Nodes[0], createAccount(id))
	requireAccounts(t, c.Nodes[0], append(ids, id))
	if _, err := os.Stat(filepath.Join(dir, "raft")); !os.IsNotExist(err) {
		t.Fatalf("the Badger store is still there: %v", err)
	}
}

// toBadgerLog turns the node's raft-wal log in dataDir into the Badger store
// an earlier release kept.
func toBadgerLog(t *testing.T, dataDir string) {
	t.Helper()
	meta := &metadb.BoltMetaDB{}
	w, err := wal.Open(filepath.Join(dataDir, "raft-wal"), wal.WithMetaStore(meta))
	if err != nil {
		t.Fatal(err)
	}
	b, err := raftbadger.Open(raftbadger.Options{Dir: filepath.Join(dataDir, "raft"), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := clustertest.Context(t, 10*time.Second)
	if err := migrate.CopyLogs(ctx, b, w, 1<<20, nil); err != nil {
		t.Fatal(err)
	}
	if err := migrate.CopyStable(ctx, b, w, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if last, err := b.LastIndex(); err != nil || last < 5 {
		t.Fatalf("Badger store's last index %d, %v", last, err)
	}
	b.Close()
	w.Close()
	meta.Close()
	if err := os.RemoveAll(filepath.Join(dataDir, "raft-wal")); err != nil {
		t.Fatal(err)
	}
}
