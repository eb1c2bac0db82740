package state

import (
	"encoding/binary"
	"errors"

	"github.com/dgraph-io/badger/v4"
)

// eventIDTTLMillis is how long an event id is remembered (command time).
const eventIDTTLMillis = 7 * 24 * 60 * 60 * 1000

// Event ids dedupe per account: evid:<account>:<event id> holds the command
// time the id was remembered, evid-time:<ms><account>:<event id> orders the
// ids by it. Account ids hold no ':', so the event id (any characters) is
// the rest of the key. Expired ids are pruned by PruneEvents, off the
// ingest path; an id older than the TTL that is still stored is not a
// duplicate, so the TTL is exact whatever the pruning backlog.

func eventIDKey(accountID, eventID string) []byte { return k(prefixEventID, accountID, eventID) }

func eventIDTimeKey(ms int64, accountID, eventID string) []byte {
	b := kb(prefixEventIDTime, u64(uint64(max(ms, 0))))
	return append(append(append(b, accountID...), ':'), eventID...)
}

// seenEventID reports whether the account's event id was remembered within
// the TTL before now. prev is the time of an expired entry still stored
// (-1 when none), which rememberEventID replaces.
func seenEventID(txn *badger.Txn, now int64, accountID, eventID string) (dup bool, prev int64, err error) {
	v, err := getRaw(txn, eventIDKey(accountID, eventID))
	if errors.Is(err, ErrNotFound) {
		return false, -1, nil
	}
	if err != nil {
		return false, -1, err
	}
	if len(v) != 8 {
		return false, -1, errors.New("event id: bad value")
	}
	at := int64(binary.BigEndian.Uint64(v))
	if now-at > eventIDTTLMillis {
		return false, at, nil
	}
	return true, -1, nil
}

// rememberEventID stores the account's event id at now.
func rememberEventID(txn *badger.Txn, now int64, accountID, eventID string, prev int64) error {
	if prev >= 0 {
		if err := txn.Delete(eventIDTimeKey(prev, accountID, eventID)); err != nil {
			return err
		}
	}
	if err := txn.Set(eventIDKey(accountID, eventID), u64(uint64(max(now, 0)))); err != nil {
		return err
	}
	return txn.Set(eventIDTimeKey(now, accountID, eventID), nil)
}

// pruneEventIDs forgets up to limit event ids remembered before cutoff and
// returns how many.
func pruneEventIDs(txn *badger.Txn, cutoff int64, limit int) (int, error) {
	if cutoff <= 0 || limit <= 0 {
		return 0, nil
	}
	expired := keysBefore(txn, prefixEventIDTime, kb(prefixEventIDTime, u64(uint64(cutoff))), limit)
	for _, key := range expired {
		// evid-time:<ms><account>:<id> -> evid:<account>:<id>
		if err := txn.Delete(kb(prefixEventID, key[len(prefixEventIDTime)+8:])); err != nil {
			return 0, err
		}
		if err := txn.Delete(key); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}
