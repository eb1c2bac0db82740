package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"lookout/control/state"
	"lookout/internal/client"
)

// snapshotCommands are lookout admin snapshot save and restore.
func snapshotCommands() []adminCommand {
	return []adminCommand{
		{name: "snapshot save", synopsis: "FILE", about: "save a consistent snapshot of the cluster's state to FILE", args: []string{"FILE"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return saveSnapshot(ctx, c, args[0])
			}
		}},
		{name: "snapshot restore", synopsis: "FILE", about: "replace the whole cluster's state with a saved snapshot", args: []string{"FILE"}, setup: func(fs *flag.FlagSet) func(context.Context, *client.Admin, []string) (any, error) {
			return func(ctx context.Context, c *client.Admin, args []string) (any, error) {
				return restoreSnapshot(ctx, c, args[0])
			}
		}},
	}
}

// savedSnapshot is what snapshot save prints.
type savedSnapshot struct {
	File         string `json:"file"`
	Bytes        int64  `json:"bytes"`
	AppliedIndex uint64 `json:"applied_index"`
}

// saveSnapshot downloads the snapshot to FILE.part, checks it whole and
// only then renames it to file, so a file by that name is always complete.
func saveSnapshot(ctx context.Context, c *client.Admin, file string) (any, error) {
	part := file + ".part"
	f, err := os.Create(part)
	if err != nil {
		return nil, err
	}
	defer os.Remove(part) // a no-op after the rename
	n, err := c.SaveSnapshot(ctx, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	info, err := checkSnapshotFile(part)
	if err != nil {
		return nil, fmt.Errorf("the node sent a bad snapshot: %w", err)
	}
	if err := os.Rename(part, file); err != nil {
		return nil, err
	}
	return savedSnapshot{File: file, Bytes: n, AppliedIndex: info.AppliedIndex}, nil
}

// restoreSnapshot checks file, then sends it.
func restoreSnapshot(ctx context.Context, c *client.Admin, file string) (any, error) {
	if _, err := checkSnapshotFile(file); err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return c.RestoreSnapshot(ctx, f, st.Size())
}

func checkSnapshotFile(file string) (state.BackupInfo, error) {
	f, err := os.Open(file)
	if err != nil {
		return state.BackupInfo{}, err
	}
	defer f.Close()
	info, err := state.CheckBackup(io.Reader(f))
	if err != nil {
		return info, fmt.Errorf("%s: %w", file, err)
	}
	return info, nil
}
