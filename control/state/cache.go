package state

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Per-entry caches. An IngestBatch touches the same monitors, quotas and
// counters many times; they are read once, changed in memory and written
// once when the entry ends (flush), which keeps the work per event to point
// reads and writes and keeps the transaction small (Badger counts every
// write of a key against the transaction's limits, also rewrites). The
// caches live for one entry only, and their write order is their first-use
// order, so they are as deterministic as the apply itself.

// monState is one monitor with its lazily loaded open runs and retention
// start.
//
// The values as loaded (stored) are kept: a record that ends the entry as
// it started is not written again.
type monState struct {
	mon    *statev1.Monitor
	stored []byte // mon: as loaded, nil for a new monitor
	dirty  bool

	runs                   []*statev1.OpenRun
	storedRuns             []byte // runs: as loaded
	runsStored             bool   // runs: was present
	runsLoaded, runsDirty  bool
	low                    uint64 // the retention start: no event of the monitor below this seq
	lowLoaded, lowModified bool

	uptime      *statev1.Uptime // uptime: as loaded and changed, nil until a flip
	uptimeDirty bool
}

// ping is the monitor's ping state, created when missing.
func (m *monState) ping() *statev1.PingState {
	if m.mon.Ping == nil {
		m.mon.Ping = &statev1.PingState{}
	}
	return m.mon.Ping
}

// monitorCache holds the monitors an entry touches, by uuid. It reads and
// writes through the store's valueCache (values, nil for none).
type monitorCache struct {
	txn    *badger.Txn
	values *valueCache
	byID   map[string]*monState // nil value: no such monitor
	order  []*monState
}

func newMonitorCache(txn *badger.Txn, values *valueCache) *monitorCache {
	return &monitorCache{txn: txn, values: values, byID: map[string]*monState{}}
}

// get returns the monitor with uuid id, nil when there is none.
func (c *monitorCache) get(id string) (*monState, error) {
	if m, ok := c.byID[id]; ok {
		return m, nil
	}
	key := monitorKey(id)
	v, err := c.values.get(c.txn, key)
	if errors.Is(err, ErrNotFound) {
		c.byID[id] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	mon := new(statev1.Monitor)
	if err := proto.Unmarshal(v, mon); err != nil {
		return nil, fmt.Errorf("decode %q: %w", key, err)
	}
	m := c.add(mon)
	m.stored = v
	return m, nil
}

// add caches mon (a monitor just read or created).
func (c *monitorCache) add(mon *statev1.Monitor) *monState {
	m := &monState{mon: mon}
	c.byID[mon.GetUuid()] = m
	c.order = append(c.order, m)
	return m
}

func (c *monitorCache) loadRuns(m *monState) error {
	if m.runsLoaded {
		return nil
	}
	id := m.mon.GetUuid()
	v, err := c.values.get(c.txn, runsKey(id))
	if errors.Is(err, ErrNotFound) {
		m.runsLoaded = true
		return nil
	}
	if err != nil {
		return err
	}
	runs, err := decodeRuns(id, v)
	m.runs, m.storedRuns, m.runsStored, m.runsLoaded = runs, v, true, err == nil
	return err
}

// loadLow reads the monitor's retention start, PingState.events_low.
func (c *monitorCache) loadLow(m *monState) {
	if !m.lowLoaded {
		m.low, m.lowLoaded = m.mon.GetPing().GetEventsLow(), true
	}
}

// flipUptime records in m's uptime that its time counts as st from atMs
// on (uptime.go); the record is read at the first flip of the entry and
// written once, by flush.
func (c *monitorCache) flipUptime(m *monState, st statev1.UptimeState, atMs, nowMs int64) error {
	if m.uptime == nil {
		u, err := getUptime(c.txn, m.mon.GetUuid())
		if err != nil {
			return err
		}
		m.uptime = u
	}
	if recordFlip(m.uptime, st, max(atMs, m.mon.GetCreatedUnixMs()), nowMs) {
		m.uptimeDirty = true
	}
	return nil
}

// flush writes what changed.
func (c *monitorCache) flush() error {
	for _, m := range c.order {
		id := m.mon.GetUuid()
		if m.lowModified {
			m.ping().EventsLow = m.low
			m.dirty = true
		}
		if m.dirty {
			key := monitorKey(id)
			v, err := proto.MarshalOptions{Deterministic: true}.Marshal(m.mon)
			if err != nil {
				return fmt.Errorf("encode %q: %w", key, err)
			}
			if m.stored == nil || !bytes.Equal(v, m.stored) {
				if err := c.values.set(c.txn, key, v); err != nil {
					return err
				}
			}
		}
		if m.runsDirty {
			v, err := encodeRuns(m.runs)
			if err != nil {
				return err
			}
			switch {
			case len(v) == 0 && !m.runsStored, m.runsStored && bytes.Equal(v, m.storedRuns): // unchanged
			case len(v) == 0:
				err = c.values.del(c.txn, runsKey(id))
			default:
				err = c.values.set(c.txn, runsKey(id), v)
			}
			if err != nil {
				return err
			}
		}
		if m.uptimeDirty {
			if err := setProto(c.txn, uptimeKey(id), m.uptime); err != nil {
				return err
			}
			m.uptimeDirty = false
		}
	}
	return nil
}
