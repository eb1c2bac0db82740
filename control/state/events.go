package state

import (
	"errors"
	"fmt"
	"math"
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

// streamColors is the stream events' colour table (docs/api.md, "What an
// event does") in table order: the first row with a keyword
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

// eventColor is the display colour of an event: a ping's by its status
// (run blue, complete green, fail red, skip gray), a stream event's by
// streamColors; custom
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

func eventDueKey(ms int64, monitorID string) []byte {
	return append(kb(prefixEventDue, u64(uint64(max(ms, 0)))), monitorID...)
}

// fileEvent files event seq of a monitor, just stored, for pruning by age:
// a monitor without an ev-due: key gets one at the event's receipt time.
// The event itself gets no index key (pruneDue finds it by its seq).
func fileEvent(txn *badger.Txn, p *statev1.PingState, monitorID string, seq uint64, receivedMs int64) error {
	if p.EventsDueUnixMs != 0 {
		return nil
	}
	p.EventsDueUnixMs = max(receivedMs, 1)
	return txn.Set(eventDueKey(p.EventsDueUnixMs, monitorID), nil)
}

// The two fields storedReceived reads by hand: StoredEvent.event and
// Event.received_unix_ms. TestStoredReceivedAgreesWithTheGeneratedCode
// fails if either is renumbered or retyped.
const (
	storedEventEventField protowire.Number = 2
	eventReceivedField    protowire.Number = 12
)

// storedReceived reads event.received_unix_ms out of an encoded
// StoredEvent without decoding the rest. Age pruning reads it for every
// event it looks at (pruneMonitor), and proto.Unmarshal would copy the
// whole event, whose message may be 64 KiB, to read one number.
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

// Events returns up to limit (all when limit <= 0) events of the account's
// monitor, newest first.
func (s *Store) Events(accountID, monitorUUID string, limit int) ([]*statev1.StoredEvent, error) {
	return s.EventsBefore(accountID, monitorUUID, NewestEvents, limit)
}

// NewestEvents is the before of EventsBefore that starts at the newest
// event.
const NewestEvents = math.MaxUint64

// EventsBefore returns up to limit (all when limit <= 0) events of the
// account's monitor whose seq is below before, newest first: a page of its
// history, the next one before the seq of the last event returned. Each
// page is one ranged read of the monitor's event keys, however long the
// history.
func (s *Store) EventsBefore(accountID, monitorUUID string, before uint64, limit int) ([]*statev1.StoredEvent, error) {
	var out []*statev1.StoredEvent
	err := s.view(func(txn *badger.Txn) error {
		m, err := getMonitor(txn, monitorUUID)
		if err != nil {
			return err
		}
		if m.GetAccountId() != accountID {
			return ErrNotFound
		}
		if before == 0 {
			return nil
		}
		prefix := k(prefixEvent, monitorUUID, "")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true, PrefetchValues: true, PrefetchSize: 16})
		defer it.Close()
		// Reverse, Seek finds the last key at or below its argument.
		for it.Seek(eventKey(monitorUUID, before-1)); it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
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
