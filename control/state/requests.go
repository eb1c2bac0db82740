package state

import (
	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// rememberRequest stores the result of request id rid applied at time now.
// prev is the time of an expired entry of rid still stored (-1 when none),
// whose time key goes, so a later prune cannot delete the new entry.
func rememberRequest(txn *badger.Txn, rid string, now, prev int64, res *raftv1.Result) error {
	if prev >= 0 {
		if err := txn.Delete(reqTimeKey(prev, rid)); err != nil {
			return err
		}
	}
	if err := setProto(txn, k(prefixRequest, rid), &statev1.AppliedRequest{TimeUnixMs: now, Result: res}); err != nil {
		return err
	}
	return txn.Set(reqTimeKey(now, rid), nil)
}

func reqTimeKey(ms int64, rid string) []byte {
	b := kb(prefixReqTime, u64(uint64(max(ms, 0))))
	return append(b, rid...)
}

// pruneRequests forgets up to limit request ids remembered before cutoff
// (leader-stamped milliseconds) and returns how many. It runs in
// PruneEvents, off the ingest path.
func pruneRequests(txn *badger.Txn, cutoff int64, limit int) (int, error) {
	if cutoff <= 0 || limit <= 0 {
		return 0, nil
	}
	expired := keysBefore(txn, prefixReqTime, reqTimeKey(cutoff, ""), limit)
	for _, key := range expired {
		rid := key[len(prefixReqTime)+8:]
		if err := txn.Delete(k(prefixRequest, string(rid))); err != nil {
			return 0, err
		}
		if err := txn.Delete(key); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}
