package state

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Reads for lists of an account's monitors (the panel's list, GET
// /api/v1/monitors): what a row shows, and nothing of the monitors'
// histories.

// ListedMonitor is a monitor as a list shows it.
type ListedMonitor struct {
	Monitor *statev1.Monitor
	// Check is a check's status (empty before its first execution; nil
	// for a ping monitor).
	Check *statev1.CheckStatus
	// Offline: the monitor is shown unknown, its agent regions being
	// offline (InOfflineRegion).
	Offline bool
}

// MonitorList returns every monitor of the account for a list, in (kind,
// name) order: each monitor's record, a check's status and whether its
// regions are offline. The records and statuses of an account of at least
// minListedRows monitors come from the list cache (listcache.go) after the
// first list; the regions are read each time. The records are shared:
// callers must not modify them.
func (s *Store) MonitorList(accountID string) ([]ListedMonitor, error) {
	out, cached, err := s.lists.list(accountID)
	if err != nil {
		return nil, err
	}
	if !cached {
		epoch := s.lists.buildStart()
		out, err = s.readMonitorList(accountID)
		s.lists.buildEnd(epoch, accountID, out)
		if err != nil {
			return nil, err
		}
	}
	for _, lm := range out {
		if len(shownRegions(lm.Monitor)) > 0 {
			return out, s.view(func(txn *badger.Txn) error { return markOffline(txn, out) })
		}
	}
	return out, nil
}

// markOffline sets Offline on each monitor of a list whose regions are
// all offline, reading each region once.
func markOffline(txn *badger.Txn, list []ListedMonitor) error {
	offline := map[string]bool{}
	for i := range list {
		lm := &list[i]
		regions := shownRegions(lm.Monitor)
		lm.Offline = len(regions) > 0
		for _, r := range regions {
			off, seen := offline[r]
			if !seen {
				var err error
				if off, err = regionOffline(txn, r); err != nil {
					return err
				}
				offline[r] = off
			}
			lm.Offline = lm.Offline && off
		}
	}
	return nil
}

// readMonitorList reads every monitor of the account and a check's status
// (an empty one before its first execution), in (kind, name) order, in one
// transaction. The records are read in key order through one iterator (a
// seek per monitor costs less than a point read).
func (s *Store) readMonitorList(accountID string) ([]ListedMonitor, error) {
	var out []ListedMonitor
	err := s.view(func(txn *badger.Txn) error {
		ids, err := monitorIDs(txn, accountID)
		if err != nil {
			return err
		}
		byID := make(map[string]*statev1.Monitor, len(ids))
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		if err := seekEach(txn, prefixMonitor, sorted, func(id string, v []byte) error {
			m := new(statev1.Monitor)
			if err := proto.Unmarshal(v, m); err != nil {
				return fmt.Errorf("decode monitor %s: %w", id, err)
			}
			byID[id] = m
			return nil
		}); err != nil {
			return err
		}
		var checks []string
		for _, id := range sorted {
			if m := byID[id]; m != nil && m.GetKind() != KindPing {
				checks = append(checks, id)
			}
		}
		status := make(map[string]*statev1.CheckStatus, len(checks))
		if err := seekEach(txn, prefixCheckStatus, checks, func(id string, v []byte) error {
			cs := new(statev1.CheckStatus)
			if err := proto.Unmarshal(v, cs); err != nil {
				return fmt.Errorf("decode check status %s: %w", id, err)
			}
			status[id] = cs
			return nil
		}); err != nil {
			return err
		}
		out = make([]ListedMonitor, 0, len(ids))
		for _, id := range ids {
			m := byID[id]
			if m == nil {
				continue // a name left without its monitor: not listed, as Monitors fails on it
			}
			lm := ListedMonitor{Monitor: m}
			if m.GetKind() != KindPing {
				lm.Check = status[id]
				if lm.Check == nil {
					lm.Check = new(statev1.CheckStatus)
				}
			}
			out = append(out, lm)
		}
		return nil
	})
	return out, err
}

// MonitorsAfter returns up to limit monitors of the account in (kind,
// name) order, after (afterKind, afterName) when afterKind is given, and
// of kind only when kind is given: a page of a list, read from the name
// index at its place.
func (s *Store) MonitorsAfter(accountID, kind, afterKind, afterName string, limit int) ([]*statev1.Monitor, error) {
	var out []*statev1.Monitor
	err := s.view(func(txn *badger.Txn) error {
		prefix := k(prefixMonitorName, accountID, "")
		if kind != "" {
			prefix = k(prefixMonitorName, accountID, kind, "")
		}
		prefetch := 100
		if limit > 0 {
			prefetch = min(limit, prefetch)
		}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: prefetch})
		defer it.Close()
		var after []byte
		it.Rewind()
		if afterKind != "" {
			after = monitorNameKey(accountID, afterKind, afterName)
			if bytes.Compare(after, prefix) > 0 {
				it.Seek(after)
			}
		}
		for ; it.Valid() && (limit <= 0 || len(out) < limit); it.Next() {
			if after != nil && bytes.Compare(it.Item().Key(), after) <= 0 {
				continue
			}
			id, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			m, err := getMonitor(txn, string(id))
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// monitorIDs are the uuids of the account's monitors in (kind, name) order.
func monitorIDs(txn *badger.Txn, accountID string) ([]string, error) {
	var ids []string
	it := txn.NewIterator(badger.IteratorOptions{Prefix: k(prefixMonitorName, accountID, ""), PrefetchValues: true, PrefetchSize: 100})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		id, err := it.Item().ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		ids = append(ids, string(id))
	}
	return ids, nil
}

// seekEach calls fn with the value of prefix+id for each id (sorted) that
// has one, through one iterator: it steps to a key a few keys ahead (the
// account's monitors are most of a small cluster's), and seeks to one
// farther away (another account's monitors lie between).
func seekEach(txn *badger.Txn, prefix []byte, ids []string, fn func(id string, v []byte) error) error {
	if len(ids) == 0 {
		return nil
	}
	const maxSteps = 8
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	it.Seek(k(prefix, ids[0]))
	for _, id := range ids {
		key := k(prefix, id)
		for steps := 0; it.Valid() && steps < maxSteps && bytes.Compare(it.Item().Key(), key) < 0; steps++ {
			it.Next()
		}
		if it.Valid() && bytes.Compare(it.Item().Key(), key) < 0 {
			it.Seek(key)
		}
		if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
			continue
		}
		if err := it.Item().Value(func(v []byte) error { return fn(id, v) }); err != nil {
			return err
		}
	}
	return nil
}

// shownRegions are the agent regions whose being offline makes m shown
// unknown: none for a disabled monitor;
// a check's regions; the region a ping monitor's newest ping came through.
func shownRegions(m *statev1.Monitor) []string {
	if !m.GetEnabled() {
		return nil
	}
	if m.GetKind() != KindPing {
		return m.GetRegions()
	}
	if r := m.GetPing().GetLastRegion(); r != "" {
		return []string{r}
	}
	return nil
}
