package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// KeyUseResolution is how coarse a key's last use is: the state records a
// use only when the stored one is at least this much older, so a key in
// steady use costs one write an hour, not one a request.
const KeyUseResolution int64 = 60 * 60 * 1000 // ms

// Where keys' last uses are kept (a record of their own, so that recording
// one never rewrites the key, which every request reads):
//
//	key-used:<account id>:<key id>   -> uint64 ms of the last recorded use
func keyUsedKey(accountID, keyID string) []byte { return k(prefixKeyUsed, accountID, keyID) }

// touchKey records that the account's key keyID was used at nowMs, unless
// its recorded use is less than KeyUseResolution older. It reads and writes
// through values (the key-used: records are cached: ingest batches read
// them for each key they carry).
func touchKey(txn *badger.Txn, values *valueCache, accountID, keyID string, nowMs int64) error {
	key := keyUsedKey(accountID, keyID)
	v, err := values.get(txn, key)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	case len(v) != 8:
		return fmt.Errorf("key %q: want 8 bytes, have %d", key, len(v))
	case nowMs-int64(binary.BigEndian.Uint64(v)) < KeyUseResolution:
		return nil
	}
	return values.set(txn, key, u64(uint64(max(nowMs, 0))))
}

// applyRecordKeyUsed records a management key's use at the command's time
// (coarsely: touchKey). A key that is gone is NOT_FOUND and changes
// nothing.
func applyRecordKeyUsed(txn *badger.Txn, ctx applyCtx, c *raftv1.RecordKeyUsed) (*raftv1.Result, error) {
	if found, err := exists(txn, k(prefixKeyID, c.GetAccountId(), c.GetKeyId())); err != nil || !found {
		return notFound("key %s not found", c.GetKeyId()), err
	}
	return ok(), touchKey(txn, ctx.values, c.GetAccountId(), c.GetKeyId(), ctx.now)
}

// KeysLastUsed returns the recorded last use (Unix ms, coarse: see
// KeyUseResolution) of the account's keys that were used, by key id.
func (s *Store) KeysLastUsed(accountID string) (map[string]int64, error) {
	out := map[string]int64{}
	prefix := k(prefixKeyUsed, accountID, "")
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			err := item.Value(func(v []byte) error {
				if len(v) != 8 {
					return fmt.Errorf("key %q: want 8 bytes, have %d", item.Key(), len(v))
				}
				out[string(item.Key()[len(prefix):])] = int64(binary.BigEndian.Uint64(v))
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
