package keyauth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// DefaultCheckTimeout bounds one check with the leader.
const DefaultCheckTimeout = 3 * time.Second

// ErrUnavailable is a key this node does not know that could not be
// checked with the leader (no leader, or no answer in time): the caller
// answers 503 with Retry-After, not 401.
var ErrUnavailable = errors.New("key cannot be checked now")

// State looks keys up in this node's copy of the replicated state.
type State interface {
	// KeyByHash returns the key whose secret hashes to hash, or an error
	// wrapping state.ErrNotFound.
	KeyByHash(hash []byte) (*raftv1.Key, error)
}

// Reader makes this node's state current.
type Reader interface {
	// ConsistentRead returns once the local state reflects every write
	// acknowledged before the call (ReadIndex).
	ConsistentRead(ctx context.Context) error
}

// Keys looks API keys up by hash. A hash this node's state does not hold
// may be a key whose creation this node has not applied yet (a follower
// catching up after a restart or a partition), so before the miss is
// final, Keys waits until the state holds everything the leader has
// acknowledged (a consistent read, shared through CatchUp) and looks again.
type Keys struct {
	state State
	*CatchUp
}

// New returns Keys over st, checking misses with r; timeout bounds one
// check (0: DefaultCheckTimeout).
func New(st State, r Reader, timeout time.Duration) *Keys {
	return &Keys{state: st, CatchUp: NewCatchUp(r, timeout)}
}

// ByHash returns the key whose secret hashes to hash. It fails with an
// error wrapping state.ErrNotFound when there is no such key as of a
// consistent read, with one wrapping ErrUnavailable when the check with
// the leader failed or ctx ended first, and with the state's error when it
// cannot be read.
func (k *Keys) ByHash(ctx context.Context, hash []byte) (*raftv1.Key, error) {
	key, err := k.state.KeyByHash(hash)
	if !errors.Is(err, state.ErrNotFound) {
		return key, err
	}
	if err := k.Wait(ctx); err != nil {
		return nil, err
	}
	return k.state.KeyByHash(hash)
}

// CatchUp shares consistent reads between the lookups that missed: one
// runs at a time, and every miss that arrives while it runs waits for the
// next one, which starts when it ends (a read that started before a miss
// arrived could predate what it looks for). So a flood of invalid
// credentials costs at most one leader round trip in flight per CatchUp,
// however many requests it holds. The Ingest and Management APIs use it
// for keys, the agent RPC for agent tokens and checks.
type CatchUp struct {
	reader  Reader
	timeout time.Duration
	rounds  atomic.Uint64

	mu      sync.Mutex
	running bool   // a round is in flight
	next    *round // the round that starts when the one in flight ends
}

// round is one consistent read and the misses waiting for it.
type round struct {
	done    chan struct{}
	err     error
	waiters int
}

// NewCatchUp returns a CatchUp reading with r; timeout bounds one read (0:
// DefaultCheckTimeout).
func NewCatchUp(r Reader, timeout time.Duration) *CatchUp {
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	return &CatchUp{reader: r, timeout: timeout}
}

// Rounds is the number of consistent reads started.
func (k *CatchUp) Rounds() uint64 { return k.rounds.Load() }

// Wait joins the next round and returns once the local state holds every
// write acknowledged before the call, or an error wrapping ErrUnavailable
// (the leader could not be asked, or ctx ended first).
func (k *CatchUp) Wait(ctx context.Context) error {
	if err := k.catchUp(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

// catchUp joins the next round and waits for it.
func (k *CatchUp) catchUp(ctx context.Context) error {
	k.mu.Lock()
	if k.next == nil {
		k.next = &round{done: make(chan struct{})}
	}
	r := k.next
	r.waiters++
	if !k.running {
		k.startLocked()
	}
	k.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startLocked starts the next round; k.mu is held.
func (k *CatchUp) startLocked() {
	r := k.next
	k.next = nil
	k.running = true
	k.rounds.Add(1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), k.timeout)
		r.err = k.reader.ConsistentRead(ctx)
		cancel()
		close(r.done)
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.next != nil {
			k.startLocked()
			return
		}
		k.running = false
	}()
}
