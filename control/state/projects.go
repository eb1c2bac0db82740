package state

import (
	"encoding/hex"

	"github.com/dgraph-io/badger/v4"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// A project is the name its monitors carry (Monitor.project): the
// panel and the APIs group and filter monitors by it. There is no project
// record. Older states hold one proj: key per project ever named, written
// and never read; such a key is deleted with any monitor of its project
// (applyDeleteMonitor), so none is left once those monitors are gone.

// projectKey is proj:<account>:<hex of the name>.
func projectKey(accountID, name string) []byte {
	b := k(prefixProject, accountID, "")
	return hex.AppendEncode(b, []byte(name))
}

// deleteProjectRecord deletes the older project record of m's project, if
// there is one.
func deleteProjectRecord(txn *badger.Txn, m *statev1.Monitor) error {
	if m.GetProject() == "" {
		return nil
	}
	key := projectKey(m.GetAccountId(), m.GetProject())
	if found, err := exists(txn, key); err != nil || !found {
		return err
	}
	return txn.Delete(key)
}
