package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// A monitor's uptime record (uptime_calc.go says what it holds and how
// its figures are computed):
//
//	uptime:<monitor uuid> -> statev1.Uptime
//
// It is written where a monitor's counted state can change, in the same
// transaction: a ping (ingest_store.go, once per entry through the
// monitor cache), a deadline (engine.go), a check's verdict
// (executions.go), an update of the monitor (putmonitors.go: paused or
// resumed); and deleted with the monitor. Its size is bounded by the
// flips and days it keeps, so it needs no pruning pass.

func uptimeKey(id string) []byte { return k(prefixUptime, id) }

// getUptime reads a monitor's uptime record (empty when it has none).
func getUptime(txn *badger.Txn, id string) (*statev1.Uptime, error) {
	u := new(statev1.Uptime)
	if err := getProto(txn, uptimeKey(id), u); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return u, nil
}

// trackUptime records that m's time counts as st from atMs on (a read,
// and a write when it changed).
func trackUptime(txn *badger.Txn, ctx applyCtx, m *statev1.Monitor, st statev1.UptimeState, atMs int64) error {
	u, err := getUptime(txn, m.GetUuid())
	if err != nil {
		return err
	}
	if !recordFlip(u, st, max(atMs, m.GetCreatedUnixMs()), ctx.now) {
		return nil
	}
	return setProto(txn, uptimeKey(m.GetUuid()), u)
}

// uptimeChange remembers a monitor's counted state before an apply
// changes it, and records a flip after if it changed.
type uptimeChange struct {
	m      *statev1.Monitor
	before statev1.UptimeState
}

func beforeChange(m *statev1.Monitor, verdict string) uptimeChange {
	return uptimeChange{m: m, before: UptimeStateOf(m, verdict)}
}

// after records the flip at atMs, if the counted state changed.
func (c uptimeChange) after(txn *badger.Txn, ctx applyCtx, verdict string, atMs int64) error {
	st := UptimeStateOf(c.m, verdict)
	if st == c.before {
		return nil
	}
	return trackUptime(txn, ctx, c.m, st, atMs)
}

// Uptimes returns the uptime records of the monitors with the given
// uuids, in one read (a monitor without one maps to an empty record).
func (s *Store) Uptimes(ids []string) (map[string]*statev1.Uptime, error) {
	out := make(map[string]*statev1.Uptime, len(ids))
	err := s.view(func(txn *badger.Txn) error {
		for _, id := range ids {
			u, err := getUptime(txn, id)
			if err != nil {
				return err
			}
			out[id] = u
		}
		return nil
	})
	return out, err
}

// UnknownSince is when m became unknown because its agent region is
// offline (InOfflineRegion): the latest of the offline verdicts of its
// regions; 0 when it is not unknown. Uptime does not count its time from
// then on.
func (s *Store) UnknownSince(m *statev1.Monitor) (int64, error) {
	if !m.GetEnabled() {
		return 0, nil
	}
	regions := m.GetRegions()
	if m.GetKind() == KindPing {
		regions = nil
		if r := m.GetPing().GetLastRegion(); r != "" {
			regions = []string{r}
		}
	}
	if len(regions) == 0 {
		return 0, nil
	}
	var since int64
	err := s.view(func(txn *badger.Txn) error {
		for _, r := range regions {
			var reg statev1.Region
			err := getProto(txn, regionKey(r), &reg)
			if errors.Is(err, ErrNotFound) || (err == nil && !reg.GetOffline()) {
				since = 0
				return nil
			}
			if err != nil {
				return err
			}
			since = max(since, reg.GetSinceUnixMs(), 1)
		}
		return nil
	})
	return since, err
}
