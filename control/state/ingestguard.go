package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	"lookout/internal/plans"
)

// The checks an IngestBatch makes per event besides the plan's limits: the
// event's key is still an ingest key of its account (so a revocation holds
// on every node from the entry that applied it on, whatever the receiving
// node had applied when it authenticated the ping), and the account creates
// at most a plan's number of ping monitors a minute (a storage guard for
// plans without a monitor limit).

// DefaultMonitorsCreatedPerMinute is how many ping monitors pings of one
// account may create in one minute when the plan does not say
// (Plan.monitors_created_per_minute absent).
const DefaultMonitorsCreatedPerMinute = plans.DefaultMonitorsCreatedPerMinute

// MaxMonitorsCreatedPerMinute bounds Plan.monitors_created_per_minute.
const MaxMonitorsCreatedPerMinute = 100_000

// minuteMillis is the length of a creation window.
const minuteMillis = 60_000

// MonitorsCreatedPerMinute is the plan's cap on ping monitors created by
// pings in one minute (DefaultMonitorsCreatedPerMinute when it says none).
func MonitorsCreatedPerMinute(p *raftv1.Plan) int64 { return plans.MonitorsCreatedPerMinute(p) }

// creationWindow is the account's count of monitors created by pings in one
// minute of leader time (stored at mon-rate:<account id> as two uint64: the
// minute since the Unix epoch and the count).
type creationWindow struct {
	minute, count uint64
	dirty         bool
	loaded        bool // read from the store (readCreationWindow)
}

func monitorRateKey(accountID string) []byte { return k(prefixMonitorRate, accountID) }

// readCreationWindow reads the account's window (zero when none).
func readCreationWindow(txn *badger.Txn, accountID string) (creationWindow, error) {
	v, err := getRaw(txn, monitorRateKey(accountID))
	if errors.Is(err, ErrNotFound) {
		return creationWindow{loaded: true}, nil
	}
	if err != nil {
		return creationWindow{}, err
	}
	if len(v) != 16 {
		return creationWindow{}, fmt.Errorf("monitor creation window of account %s: %d bytes, want 16", accountID, len(v))
	}
	return creationWindow{minute: binary.BigEndian.Uint64(v), count: binary.BigEndian.Uint64(v[8:]), loaded: true}, nil
}

// take counts one creation at nowMs (the entry's leader-stamped time) and
// tells whether it is within limit for that minute.
func (w *creationWindow) take(nowMs int64, limit uint64) bool {
	minute := uint64(max(nowMs, 0) / minuteMillis)
	if minute != w.minute {
		w.minute, w.count = minute, 0
	}
	if w.count >= limit {
		return false
	}
	w.count++
	w.dirty = true
	return true
}

// write stores the window when it changed.
func (w *creationWindow) write(txn *badger.Txn, accountID string) error {
	if !w.dirty {
		return nil
	}
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 16), w.minute)
	return txn.Set(monitorRateKey(accountID), binary.BigEndian.AppendUint64(v, w.count))
}

// keyAllowed tells whether the event's key (its id) is an ingest key of
// the account as of this entry. An event without a key id comes from an
// entry written before events carried one and is allowed, so that replaying
// such an entry gives the result it gave then. Answers are cached per batch.
func (in *ingest) keyAllowed(a *acctState, keyID string) (bool, error) {
	if keyID == "" {
		return true, nil
	}
	if ok, seen := a.keys[keyID]; seen {
		return ok, nil
	}
	ok, err := isIngestKey(in.txn, a.id, keyID)
	if err != nil {
		return false, err
	}
	if a.keys == nil {
		a.keys = map[string]bool{}
	}
	a.keys[keyID] = ok
	return ok, nil
}

// isIngestKey tells whether the account has an ingest key with id keyID.
func isIngestKey(txn *badger.Txn, accountID, keyID string) (bool, error) {
	hash, err := getRaw(txn, k(prefixKeyID, accountID, keyID))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var key raftv1.Key
	if err := getProto(txn, kb(prefixKeyHash, hash), &key); errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return key.GetType() == raftv1.KeyType_KEY_TYPE_INGEST, nil
}
