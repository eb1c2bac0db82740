package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Dependencies (decisions.md 12): a monitor names, in depends_on, monitors
// of its account by kind and name. While one of them is down (its
// QuietState.down_since is set), the gate (quiet.go) holds the dependent's
// alerts; when it is no longer down, the leader judges the dependent
// afresh, and one still down alerts then, once. Names are resolved when an
// alert is about to be sent: one that resolves to nothing (the monitor was
// deleted or renamed) holds nothing.

// downDependency returns the first monitor m depends on that is down (nil:
// none).
func downDependency(txn *badger.Txn, values *valueCache, m *statev1.Monitor) (*statev1.Monitor, error) {
	for _, d := range m.GetDependsOn() {
		dep, err := dependency(txn, values, m.GetAccountId(), d.GetKind(), d.GetName())
		if err != nil {
			return nil, err
		}
		if dep != nil && dep.GetQuiet().GetDownSinceUnixMs() != 0 {
			return dep, nil
		}
	}
	return nil, nil
}

// dependency reads the account's monitor of kind called name (nil: none).
func dependency(txn *badger.Txn, values *valueCache, accountID, kind, name string) (*statev1.Monitor, error) {
	var id []byte
	var err error
	if values != nil {
		id, err = values.get(txn, monitorNameKey(accountID, kind, name))
	} else {
		id, err = getRaw(txn, monitorNameKey(accountID, kind, name))
	}
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if values != nil {
		return getMonitorIn(txn, values, string(id))
	}
	return getMonitor(txn, string(id))
}

// DependencyState is one entry of a monitor's depends_on as it stands.
type DependencyState struct {
	Kind, Name string
	// Monitor is the monitor it names (nil: the account has none).
	Monitor *statev1.Monitor
	// Down: the monitor is down for the alert rules.
	Down bool
}

// Dependencies returns m's depends_on with what each names now.
func (s *Store) Dependencies(m *statev1.Monitor) ([]DependencyState, error) {
	var out []DependencyState
	err := s.view(func(txn *badger.Txn) error {
		for _, d := range m.GetDependsOn() {
			dep, err := dependency(txn, nil, m.GetAccountId(), d.GetKind(), d.GetName())
			if err != nil {
				return err
			}
			out = append(out, DependencyState{Kind: d.GetKind(), Name: d.GetName(), Monitor: dep, Down: dep.GetQuiet().GetDownSinceUnixMs() != 0})
		}
		return nil
	})
	return out, err
}

// IsDown tells whether m is down for the alert rules: a dependency that
// holds its dependents' alerts.
func IsDown(m *statev1.Monitor) bool { return m.GetQuiet().GetDownSinceUnixMs() != 0 }
