package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// Deleting events: by count on the ingest path (ingest.trim), by age in
// the leader's PruneEvents entries, and all of a deleted monitor's.
//
// Age pruning finds a monitor's old events by one key per monitor,
// ev-due:<ms><monitor>, at the receipt time of its oldest event, rather
// than by one key per event: an event's own index key, written when it was
// stored and deleted with it, would add a memtable write to every stored
// event and another to every deleted one.

// deleteEventAt deletes event seq of a monitor if it exists, and reports
// whether it existed. Whether it exists comes from values when it knows,
// else from the database.
func deleteEventAt(txn *badger.Txn, values *valueCache, monitorID string, seq uint64) (bool, error) {
	key := eventKey(monitorID, seq)
	present, known := values.eventPresent(txn, key)
	if known && !present {
		return false, nil
	}
	if !known {
		_, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("get %q: %w", key, err)
		}
	}
	return true, removeEvent(txn, values, monitorID, seq)
}

// removeEvent deletes event seq of a monitor.
func removeEvent(txn *badger.Txn, values *valueCache, monitorID string, seq uint64) error {
	key := eventKey(monitorID, seq)
	if err := txn.Delete(key); err != nil {
		return err
	}
	values.eventDeleted(txn, key)
	return nil
}

// purgeEvents deletes up to limit events of a deleted monitor, oldest
// first. When some are left it sets
// the monitor's ev-purge: marker, else it removes the marker. It returns
// how many it deleted.
func purgeEvents(txn *badger.Txn, values *valueCache, monitorID string, limit int) (int, error) {
	prefix := k(prefixEvent, monitorID, "")
	var seqs []uint64
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	for it.Rewind(); it.Valid() && len(seqs) <= limit; it.Next() {
		seqs = append(seqs, binary.BigEndian.Uint64(it.Item().Key()[len(prefix):]))
	}
	it.Close()
	more := len(seqs) > limit
	if more {
		seqs = seqs[:limit]
	}
	for _, seq := range seqs {
		if _, err := deleteEventAt(txn, values, monitorID, seq); err != nil {
			return 0, err
		}
	}
	marker := k(prefixEventPurge, monitorID)
	if more {
		return len(seqs), txn.Set(marker, nil)
	}
	return len(seqs), txn.Delete(marker)
}

// applyPruneEvents is the background clean-up, bounded by max deletions:
// first expired request ids, event ids and ended sessions (their TTLs
// count from the command's time), audit log entries made before
// audit_before_unix_ms (pruneAudit), then what deleted monitors left behind, then events
// received before before_unix_ms, by their monitors' ev-due: keys
// (pruneDue), taking events of at most MaxPruneMonitors monitors and
// keeping their counters right. The result's deleted is the
// number deleted, or max when the entry stopped at MaxPruneMonitors
// monitors with events left: the leader proposes again while it is max;
// its pruned says what was deleted, by kind.
func applyPruneEvents(txn *badger.Txn, ctx applyCtx, c *raftv1.PruneEvents) (*raftv1.Result, error) {
	if c.GetMax() <= 0 || c.GetMax() > MaxPruneEvents {
		return invalid("prune events: max must be 1 to %d", MaxPruneEvents), nil
	}
	budget := int(c.GetMax())
	counts := &raftv1.PruneCounts{}
	ids, err := pruneRequests(txn, ctx.now-requestTTLMillis, budget)
	if err != nil {
		return nil, err
	}
	counts.RequestIds = int64(ids)
	n, err := pruneEventIDs(txn, ctx.now-eventIDTTLMillis, budget-ids)
	if err != nil {
		return nil, err
	}
	ids += n
	counts.EventIds = int64(n)
	n, err = pruneEndedSessions(txn, ctx.now-sessionEndGraceMillis, budget-ids)
	if err != nil {
		return nil, err
	}
	ids += n
	counts.Sessions = int64(n)
	n, auditFull, err := pruneAudit(txn, c.GetAuditBeforeUnixMs(), budget-ids)
	if err != nil {
		return nil, err
	}
	ids += n
	counts.Audit = int64(n)
	budget -= ids
	var purging []string
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixEventPurge})
	for it.Rewind(); it.Valid(); it.Next() {
		purging = append(purging, string(it.Item().Key()[len(prefixEventPurge):]))
	}
	it.Close()
	deleted := 0
	for _, id := range purging {
		if deleted == budget {
			break
		}
		n, err := purgeEvents(txn, ctx.values, id, budget-deleted)
		if err != nil {
			return nil, err
		}
		deleted += n
	}
	mons := newMonitorCache(txn, ctx.values)
	n, full, err := pruneDue(txn, ctx.values, mons, c.GetBeforeUnixMs(), budget-deleted)
	if err != nil {
		return nil, err
	}
	deleted += n
	if err := mons.flush(); err != nil {
		return nil, err
	}
	counts.Events = int64(deleted)
	n = ids + deleted
	if full || auditFull {
		n = int(c.GetMax())
	}
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: int64(n), Pruned: counts}, nil
}

// pruneDue takes the monitors whose ev-due: key is before beforeMs, in
// that key's order, while mons holds fewer than MaxPruneMonitors, and
// deletes each one's events from its retention start up, while they were
// received before beforeMs, at most limit in all. A monitor's key moves to
// the receipt time of the first event it keeps, or goes with its last
// event. So an event received out of order (an agent's buffered event,
// stored after newer ones) waits for the events stored before it. full
// reports that it stopped at MaxPruneMonitors monitors with keys due.
func pruneDue(txn *badger.Txn, values *valueCache, mons *monitorCache, beforeMs int64, limit int) (deleted int, full bool, err error) {
	end := kb(prefixEventDue, u64(uint64(max(beforeMs, 0))))
	due := keysBefore(txn, prefixEventDue, end, MaxPruneMonitors+1)
	for _, key := range due {
		if deleted == limit {
			return deleted, false, nil
		}
		if len(key) < len(prefixEventDue)+8 {
			return 0, false, fmt.Errorf("bad event due key %q", key)
		}
		id := string(key[len(prefixEventDue)+8:])
		if _, seen := mons.byID[id]; !seen && len(mons.order) == MaxPruneMonitors {
			return deleted, true, nil
		}
		m, err := mons.get(id)
		if err != nil {
			return 0, false, err
		}
		if m == nil { // its monitor is gone: DeleteMonitor deletes the key, this is a safety net
			if err := txn.Delete(key); err != nil {
				return 0, false, err
			}
			continue
		}
		n, err := pruneMonitor(txn, values, mons, m, key, beforeMs, limit-deleted)
		if err != nil {
			return 0, false, err
		}
		deleted += n
	}
	return deleted, false, nil
}

// pruneMonitor deletes monitor m's events from its retention start up
// while they were received before beforeMs, at most limit, and moves its
// ev-due: key (dueKey) to the first event it keeps, or deletes it with the
// last event. When it stops at limit the key stays: it is still due.
func pruneMonitor(txn *badger.Txn, values *valueCache, mons *monitorCache, m *monState, dueKey []byte, beforeMs int64, limit int) (int, error) {
	mons.loadLow(m)
	id := m.mon.GetUuid()
	prefix := k(prefixEvent, id, "")
	var old []uint64 // the seqs to delete
	next := int64(0) // the receipt time of the first event kept; 0: none
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	for it.Seek(eventKey(id, m.low)); it.Valid(); it.Next() {
		item := it.Item()
		var received int64
		if err := item.Value(func(v []byte) (err error) { received, err = storedReceived(v); return err }); err != nil {
			err = fmt.Errorf("event %q: %w", item.Key(), err)
			it.Close()
			return 0, err
		}
		if received >= beforeMs {
			next = max(received, 1)
			break
		}
		if len(old) == limit {
			next = -1
			break
		}
		old = append(old, binary.BigEndian.Uint64(item.Key()[len(prefix):]))
	}
	it.Close()
	p := m.ping()
	for _, seq := range old {
		if err := removeEvent(txn, values, id, seq); err != nil {
			return 0, err
		}
		if p.Events > 0 {
			p.Events--
		}
		m.low, m.lowModified = seq+1, true
	}
	m.dirty = true
	if next < 0 {
		return len(old), nil
	}
	if err := txn.Delete(dueKey); err != nil {
		return 0, err
	}
	p.EventsDueUnixMs = next
	if next == 0 {
		return len(old), nil
	}
	return len(old), txn.Set(eventDueKey(next, id), nil)
}
