package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// MaxPruneEvents bounds PruneEvents.max, and the events DeleteMonitor
// removes in its own entry, so that one entry always fits one Badger
// transaction (also with the Small options). A PruneEvents with a larger
// max is INVALID.
const MaxPruneEvents = 1024

// Event display colours.
const (
	ColorBlue  = "blue"
	ColorGreen = "green"
	ColorRed   = "red"
	ColorGray  = "gray"
)

// streamColors is api.md 3.2 in table order: the first row with a keyword
// contained in the lower-cased state wins, so "not ok" and "failed_ok" are
// green (they contain "ok") and "broken" is green too. We keep the table's
// literal reading rather than guess at word boundaries.
var streamColors = []struct {
	words []string
	color string
}{
	{[]string{"success", "complete", "ok"}, ColorGreen},
	{[]string{"fail", "error"}, ColorRed},
	{[]string{"start", "running", "pending"}, ColorBlue},
}

// eventColor is the display colour of an event (api.md 3.1, 3.2); custom
// event types are gray.
func eventColor(ev *raftv1.Event) string {
	switch ev.GetEventType() {
	case "ping":
		switch ev.GetStatus() {
		case "run":
			return ColorBlue
		case "complete":
			return ColorGreen
		case "fail":
			return ColorRed
		}
	case "stream_event":
		state := strings.ToLower(ev.GetState())
		for _, row := range streamColors {
			for _, w := range row.words {
				if strings.Contains(state, w) {
					return row.color
				}
			}
		}
	}
	return ColorGray
}

func eventKey(monitorID string, seq uint64) []byte {
	return append(k(prefixEvent, monitorID, ""), u64(seq)...)
}

func eventTimeKey(receivedMs int64, monitorID string, seq uint64) []byte {
	b := kb(prefixEventTime, u64(uint64(max(receivedMs, 0))))
	b = append(append(b, monitorID...), ':')
	return append(b, u64(seq)...)
}

// parseEventTimeKey returns the monitor and seq of an ev-time: key.
func parseEventTimeKey(key []byte) (string, uint64, error) {
	rest := key[len(prefixEventTime):]
	if len(rest) < 8+1+8 || rest[len(rest)-9] != ':' {
		return "", 0, fmt.Errorf("bad event time key %q", key)
	}
	return string(rest[8 : len(rest)-9]), binary.BigEndian.Uint64(rest[len(rest)-8:]), nil
}

func eventLowKey(monitorID string) []byte { return k(prefixEventLow, monitorID) }

// The two fields storedReceived reads by hand: StoredEvent.event and
// Event.received_unix_ms. TestStoredReceivedAgreesWithTheGeneratedCode
// fails if either is renumbered or retyped.
const (
	storedEventEventField protowire.Number = 2
	eventReceivedField    protowire.Number = 12
)

// storedReceived reads event.received_unix_ms out of an encoded
// StoredEvent without decoding the rest. It is on the ingest path
// (retention by count deletes the oldest event of a full monitor), and
// proto.Unmarshal would copy the whole event, whose message may be
// 64 KiB, to read one number.
func storedReceived(v []byte) (int64, error) {
	ev, err := wireField(v, storedEventEventField, protowire.BytesType)
	if err != nil || ev == nil {
		return 0, err
	}
	r, err := wireField(ev, eventReceivedField, protowire.VarintType)
	if err != nil || r == nil {
		return 0, err
	}
	n, _ := protowire.ConsumeVarint(r)
	return int64(n), nil
}

// wireField returns the last occurrence of field num (its value bytes; a
// varint's own encoding) in the encoded message b, nil when absent.
func wireField(b []byte, num protowire.Number, typ protowire.Type) ([]byte, error) {
	var found []byte
	for len(b) > 0 {
		n, t, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, errors.New("bad stored event")
		}
		b = b[l:]
		m := protowire.ConsumeFieldValue(n, t, b)
		if m < 0 {
			return nil, errors.New("bad stored event")
		}
		if n == num && t == typ {
			found = b[:m]
			if typ == protowire.BytesType {
				found, _ = protowire.ConsumeBytes(b)
			}
		}
		b = b[m:]
	}
	return found, nil
}

// deleteEventAt deletes event seq of a monitor if it exists, with its time
// index, and reports whether it existed. The receipt time (in the index
// key) comes from values when it knows it, else from the event.
func deleteEventAt(txn *badger.Txn, values *valueCache, monitorID string, seq uint64) (bool, error) {
	key := eventKey(monitorID, seq)
	received, present, known := values.eventReceived(txn, key)
	if !known {
		item, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("get %q: %w", key, err)
		}
		if err := item.Value(func(v []byte) (err error) { received, err = storedReceived(v); return err }); err != nil {
			return false, fmt.Errorf("event %q: %w", key, err)
		}
	} else if !present {
		return false, nil
	}
	if err := txn.Delete(eventTimeKey(received, monitorID, seq)); err != nil {
		return false, err
	}
	if err := txn.Delete(key); err != nil {
		return false, err
	}
	values.eventDeleted(txn, key)
	return true, nil
}

// purgeEvents deletes up to limit events of a deleted monitor, oldest
// first, with their time index. When some are left it sets the monitor's
// ev-purge: marker, else it removes the marker. It returns how many it
// deleted.
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
// first expired request ids and event ids (their TTLs count from the
// command's time), then what deleted monitors left behind, then, oldest
// receipt first, events received before before_unix_ms (of at most
// MaxPruneMonitors monitors), keeping the counters of their monitors
// right. The result's deleted is the number deleted, or max when the entry
// stopped at MaxPruneMonitors monitors with events left: the leader
// proposes again while it is max.
func applyPruneEvents(txn *badger.Txn, ctx applyCtx, c *raftv1.PruneEvents) (*raftv1.Result, error) {
	if c.GetMax() <= 0 || c.GetMax() > MaxPruneEvents {
		return invalid("prune events: max must be 1 to %d", MaxPruneEvents), nil
	}
	budget := int(c.GetMax())
	ids, err := pruneRequests(txn, ctx.now-requestTTLMillis, budget)
	if err != nil {
		return nil, err
	}
	n, err := pruneEventIDs(txn, ctx.now-eventIDTTLMillis, budget-ids)
	if err != nil {
		return nil, err
	}
	ids += n
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
	old, full, err := expiredEvents(txn, c.GetBeforeUnixMs(), budget-deleted)
	if err != nil {
		return nil, err
	}
	mons := newMonitorCache(txn, ctx.values)
	for _, e := range old {
		key, id, seq := e.key, e.monitor, e.seq
		evKey := eventKey(id, seq)
		if err := txn.Delete(evKey); err != nil {
			return nil, err
		}
		ctx.values.eventDeleted(txn, evKey)
		if err := txn.Delete(key); err != nil {
			return nil, err
		}
		if err := mons.eventPruned(id, seq); err != nil {
			return nil, err
		}
	}
	if err := mons.flush(); err != nil {
		return nil, err
	}
	n = ids + deleted + len(old)
	if full {
		n = int(c.GetMax())
	}
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: int64(n)}, nil
}

// expiredEvent is an ev-time: key with its monitor and seq.
type expiredEvent struct {
	key     []byte
	monitor string
	seq     uint64
}

// expiredEvents lists, oldest receipt first, up to limit events received
// before beforeMs, of at most MaxPruneMonitors monitors (each one's record
// is rewritten, and a record can be tens of KB). full reports that it
// stopped at that many monitors with events left.
func expiredEvents(txn *badger.Txn, beforeMs int64, limit int) (old []expiredEvent, full bool, err error) {
	end := kb(prefixEventTime, u64(uint64(max(beforeMs, 0))))
	monitors := map[string]bool{}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixEventTime})
	defer it.Close()
	for it.Rewind(); it.Valid() && len(old) < limit; it.Next() {
		key := it.Item().KeyCopy(nil)
		if bytes.Compare(key, end) >= 0 {
			break
		}
		id, seq, err := parseEventTimeKey(key)
		if err != nil {
			return nil, false, err
		}
		if !monitors[id] {
			if len(monitors) == MaxPruneMonitors {
				return old, true, nil
			}
			monitors[id] = true
		}
		old = append(old, expiredEvent{key: key, monitor: id, seq: seq})
	}
	return old, false, nil
}

// Events returns up to limit (all when limit <= 0) events of the account's
// monitor, newest first.
func (s *Store) Events(accountID, monitorUUID string, limit int) ([]*statev1.StoredEvent, error) {
	var out []*statev1.StoredEvent
	err := s.view(func(txn *badger.Txn) error {
		m, err := getMonitor(txn, monitorUUID)
		if err != nil {
			return err
		}
		if m.GetAccountId() != accountID {
			return ErrNotFound
		}
		prefix := k(prefixEvent, monitorUUID, "")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		for it.Seek(append(bytes.Clone(prefix), 0xff)); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
			se := new(statev1.StoredEvent)
			if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, se) }); err != nil {
				return fmt.Errorf("decode %q: %w", it.Item().Key(), err)
			}
			out = append(out, se)
		}
		return nil
	})
	return out, err
}
