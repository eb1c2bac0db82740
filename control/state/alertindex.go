package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// MaxPruneAlerts bounds PruneAlerts.max: one entry deletes at most this
// many alerts (two keys each), so that it always fits one Badger
// transaction. A PruneAlerts with a larger max is INVALID.
const MaxPruneAlerts = 1024

// The outbox indexes. alert-due: orders the open deliveries by their next
// try, so the dispatcher reads only what is due; alert-done: orders the
// finished alerts by the time they finished, so PruneAlerts reads only
// what is old enough. Both are written by the apply functions that change
// an alert, in the same transaction.

// alertDueKey is alert-due:<uint64 next try ms><alert id>:<channel ref>.
func alertDueKey(nextTryMs int64, alertID, ref string) []byte {
	return k(kb(prefixAlertDue, u64(uint64(max(nextTryMs, 0)))), alertID, ref)
}

// alertDoneKey is alert-done:<uint64 finished ms><alert id>.
func alertDoneKey(finishedMs int64, alertID string) []byte {
	return kb(kb(prefixAlertDone, u64(uint64(max(finishedMs, 0)))), []byte(alertID))
}

// open reports whether delivery d is neither delivered nor given up.
func open(d *statev1.Delivery) bool { return !d.GetDelivered() && !d.GetGivenUp() }

// DueDelivery is an open delivery of the outbox, as the due index has it.
type DueDelivery struct {
	AlertID       string
	ChannelRef    string
	NextTryUnixMs int64
	// AccountID is the alert's account, the value of its due key; empty
	// when the key does not carry it (an id longer than
	// maxDueAccountBytes, or a key written before the index carried it):
	// read the alert then.
	AccountID string
}

// parseAlertDueKey splits an alert-due: key. The time is fixed width and
// alert ids (UUIDs) hold no ':', so the first ':' after the time ends
// the id; the channel ref is the rest.
func parseAlertDueKey(key []byte) (DueDelivery, error) {
	rest := key[len(prefixAlertDue):]
	if len(rest) < 8 {
		return DueDelivery{}, fmt.Errorf("alert due key %q: too short", key)
	}
	ms, rest := int64(binary.BigEndian.Uint64(rest[:8])), rest[8:]
	i := bytes.IndexByte(rest, ':')
	if i < 0 {
		return DueDelivery{}, fmt.Errorf("alert due key %q: no channel ref", key)
	}
	return DueDelivery{AlertID: string(rest[:i]), ChannelRef: string(rest[i+1:]), NextTryUnixMs: ms}, nil
}

// maxDueAccountBytes bounds the account id a due key carries as its
// value: ids are UUIDs or short names, and the bounds of the commands that
// raise many alerts at once (SetRegionState) leave no room for longer ones.
const maxDueAccountBytes = 64

// setDueKey sets due key key of an alert of accountID in txn (the account
// is its value, so that the dispatcher need not read the alert to know
// whose it is; empty when longer than maxDueAccountBytes) and tells the
// store's floor.
func setDueKey(txn *badger.Txn, ctx applyCtx, key []byte, accountID string) error {
	if ctx.due != nil {
		ctx.due.setting(key)
	}
	var v []byte
	if len(accountID) <= maxDueAccountBytes {
		v = []byte(accountID)
	}
	return txn.Set(key, v)
}

// DueDeliveries calls fn for each open delivery whose next try is at or
// before nowMs, earliest first, until fn returns false. It returns the
// next try of the first delivery due after nowMs: 0 when there is none,
// or when fn stopped the scan. It reads index keys only (no alert: a key's
// value is the alert's account), and
// only those of the due range and the one key after it; it starts past
// the deleted keys of what was delivered (dueFloor).
//
// fn runs inside a read transaction: it must not block for long.
func (s *Store) DueDeliveries(nowMs int64, fn func(DueDelivery) bool) (next int64, err error) {
	from, gen := s.due.start()
	first, seen := dueEnd, false // the first live key (dueEnd: none)
	defer func() {
		if err == nil {
			s.due.advance(gen, first)
		}
	}()
	err = s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixAlertDue})
		defer it.Close()
		for it.Seek(from); it.Valid(); it.Next() {
			s.outboxReads.Add(1)
			if !seen {
				first, seen = it.Item().KeyCopy(nil), true
			}
			due, err := parseAlertDueKey(it.Item().Key())
			if err != nil {
				return err
			}
			if due.NextTryUnixMs > nowMs {
				next = due.NextTryUnixMs
				return nil
			}
			if err := it.Item().Value(func(v []byte) error { due.AccountID = string(v); return nil }); err != nil {
				return err
			}
			if !fn(due) {
				return nil
			}
		}
		return nil
	})
	return next, err
}

// OutboxReads counts the outbox records and index keys this store has
// read for PendingAlerts, DueDeliveries and Alert since it opened: what
// the dispatcher costs the state (tests check it reads only what is due).
func (s *Store) OutboxReads() uint64 { return s.outboxReads.Load() }

// applyPruneAlerts deletes finished alerts that finished before
// before_unix_ms, oldest first, at most max of them (it bounds max itself,
// as applyPruneEvents does). The result's deleted field is the number
// deleted; the leader proposes again while it is max.
func applyPruneAlerts(txn *badger.Txn, c *raftv1.PruneAlerts) (*raftv1.Result, error) {
	if c.GetMax() <= 0 || c.GetMax() > MaxPruneAlerts {
		return invalid("prune alerts: max must be 1 to %d", MaxPruneAlerts), nil
	}
	limit := kb(prefixAlertDone, u64(uint64(max(c.GetBeforeUnixMs(), 0))))
	old := keysBefore(txn, prefixAlertDone, limit, int(min(c.GetMax(), math.MaxInt)))
	for _, key := range old {
		if len(key) < len(prefixAlertDone)+8 {
			return nil, fmt.Errorf("alert done key %q: too short", key)
		}
		id := string(key[len(prefixAlertDone)+8:])
		if err := txn.Delete(alertKey(id)); err != nil {
			return nil, err
		}
		if err := txn.Delete(key); err != nil {
			return nil, err
		}
	}
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: int64(len(old))}, nil
}
