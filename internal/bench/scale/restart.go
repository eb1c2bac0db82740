package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"lookout/internal/bench"
)

// follower is the index of a node that is not the leader.
func follower(ctx context.Context, cl *bench.Cluster, nodes int) (int, error) {
	leader, err := cl.Leader(ctx)
	if err != nil {
		return -1, err
	}
	return (leader + 1) % nodes, nil
}

// restartNode stops node i with SIGTERM, starts it again on the same data,
// and returns how long it took to stop, and from its start until GET
// /health answered 200.
func restartNode(ctx context.Context, cl *bench.Cluster, i int) (stop, healthy time.Duration, err error) {
	t0 := time.Now()
	if err := cl.StopNode(i); err != nil {
		return 0, 0, err
	}
	stop = time.Since(t0)
	t1 := time.Now()
	if err := cl.StartNode(ctx, i); err != nil {
		return 0, 0, err
	}
	at, err := cl.WaitHealthy(ctx, i, 10*time.Minute)
	if err != nil {
		return 0, 0, err
	}
	return stop, at.Sub(t1), nil
}

// catchUp are the figures of a node started on an empty data directory.
type catchUp struct {
	saved, restored time.Duration // the operator's save and restore (-catchup snapshot)
	snapshotBytes   int64
	healthy         time.Duration // from the node's start until /health answered 200
	bySnapshot      bool          // the node installed a snapshot (else it replayed the log)
}

// catchUpNode stops node i, empties its data directory, starts it again
// with the same flags (it rejoins as the voter it was, docs/reliability.md
// "A node that cannot read its raft log") and times it until it is
// healthy. With forceSnapshot the cluster's state is first saved and
// restored through the operator API: a restore leaves a hole in the raft
// log, so the node must install the snapshot, as it would on a cluster
// whose log has been compacted.
func catchUpNode(ctx context.Context, cl *bench.Cluster, i, nodes int, forceSnapshot bool) (catchUp, error) {
	var c catchUp
	if forceSnapshot {
		if err := saveAndRestore(ctx, cl, &c); err != nil {
			return c, err
		}
		if err := waitReplicated(ctx, cl, nodes); err != nil {
			return c, err
		}
	}
	if err := cl.StopNode(i); err != nil {
		return c, err
	}
	if err := os.RemoveAll(cl.DataDir(i)); err != nil {
		return c, err
	}
	start := time.Now()
	if err := cl.StartNode(ctx, i); err != nil {
		return c, err
	}
	at, err := cl.WaitHealthy(ctx, i, 15*time.Minute)
	if err != nil {
		return c, err
	}
	c.healthy = at.Sub(start)
	snaps, _ := filepath.Glob(filepath.Join(cl.DataDir(i), "snapshots", "snapshots", "*", "meta.json"))
	c.bySnapshot = len(snaps) > 0
	return c, nil
}

// saveAndRestore saves the state through the leader's operator API to a
// temporary file and restores it into the cluster through the same node
// (another, should leadership move meanwhile: a follower forwards it).
func saveAndRestore(ctx context.Context, cl *bench.Cluster, c *catchUp) error {
	leader, err := cl.Leader(ctx)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp("", "benchscale-*.snapshot")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	t0 := time.Now()
	if c.snapshotBytes, err = cl.Admin(leader).SaveSnapshot(ctx, f); err != nil {
		return fmt.Errorf("save snapshot: %w", err)
	}
	c.saved = time.Since(t0)
	t1 := time.Now()
	err = bench.Retry(ctx, func() error {
		// A section reader each time: the client closes a body it can.
		_, err := cl.Admin(leader).RestoreSnapshot(ctx, io.NewSectionReader(f, 0, c.snapshotBytes), c.snapshotBytes)
		if err != nil {
			fmt.Printf("  restore: %v\n", err)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	c.restored = time.Since(t1)
	return nil
}
