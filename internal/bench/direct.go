package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Direct is a real state store in a temporary directory whose commands are
// applied straight to the state machine, one entry each, as the leader
// would stamp them (no raft): for benchmarks of the leader's tasks in one
// process (bench/engine, bench/checks).
type Direct struct {
	// Store is the state, read by the task under measurement.
	Store *state.Store
	// OnApply, when set, sees every applied command and its result (under
	// Direct's lock, in order).
	OnApply func(cmd *raftv1.Command, res *raftv1.Result)

	dir   string
	mu    sync.Mutex
	index uint64
}

// OpenDirect opens a store in a new temporary directory; Close removes it.
func OpenDirect(prefix string) (*Direct, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	store, err := state.Open(state.Options{Dir: dir, Logger: hclog.NewNullLogger()})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Direct{Store: store, dir: dir}, nil
}

// Close closes the store and removes its directory.
func (d *Direct) Close() {
	d.Store.Close()
	os.RemoveAll(d.dir)
}

// Apply stamps cmd (version, request id, time) and applies it as the next
// entry.
func (d *Direct) Apply(ctx context.Context, cmd *raftv1.Command) (*raftv1.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cmd.Version, cmd.RequestId, cmd.TimeUnixMs = state.CommandVersion, uuid.NewString(), time.Now().UnixMilli()
	d.index++
	res := d.Store.ApplyBatch([]state.Entry{{Index: d.index, Command: cmd}})[0]
	if d.OnApply != nil {
		d.OnApply(cmd, res)
	}
	return res, nil
}

// Must applies cmd and wants it to succeed.
func (d *Direct) Must(ctx context.Context, cmd *raftv1.Command) error {
	res, err := d.Apply(ctx, cmd)
	if err != nil {
		return err
	}
	if res.GetStatus() != raftv1.Status_STATUS_OK {
		return fmt.Errorf("%T: %v %s", cmd.GetOp(), res.GetStatus(), res.GetMessage())
	}
	return nil
}
