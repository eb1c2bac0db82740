package state

import (
	"bytes"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// rememberRequest stores the result of request id rid applied at time now.
func rememberRequest(txn *badger.Txn, rid string, now int64, res *raftv1.Result) error {
	if err := setProto(txn, k(prefixRequest, rid), &statev1.AppliedRequest{TimeUnixMs: now, Result: res}); err != nil {
		return err
	}
	return txn.Set(reqTimeKey(now, rid), nil)
}

func reqTimeKey(ms int64, rid string) []byte {
	b := kb(prefixReqTime, u64(uint64(max(ms, 0))))
	return append(b, rid...)
}

// pruneRequests forgets up to pruneBatch request ids remembered before
// cutoff (leader-stamped milliseconds). It runs with every entry, so the
// amount of work per entry stays bounded and every node prunes the same.
func pruneRequests(txn *badger.Txn, cutoff int64) error {
	if cutoff <= 0 {
		return nil
	}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixReqTime})
	var expired [][]byte
	limit := reqTimeKey(cutoff, "")
	for it.Rewind(); it.Valid() && len(expired) < pruneBatch; it.Next() {
		key := it.Item().KeyCopy(nil)
		if bytes.Compare(key, limit) >= 0 {
			break
		}
		expired = append(expired, key)
	}
	it.Close()
	for _, key := range expired {
		rid := key[len(prefixReqTime)+8:]
		if err := txn.Delete(k(prefixRequest, string(rid))); err != nil {
			return err
		}
		if err := txn.Delete(key); err != nil {
			return err
		}
	}
	return nil
}
