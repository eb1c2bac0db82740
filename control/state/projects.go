package state

import (
	"encoding/hex"

	"github.com/dgraph-io/badger/v4"

	statev1 "lookout/internal/gen/lookout/state/v1"
)

// projectKey is proj:<account>:<hex of the name>: a project name may hold
// any character, the hex form none that matters to the layout, and hex
// keeps the byte order of names.
func projectKey(accountID, name string) []byte {
	b := k(prefixProject, accountID, "")
	return hex.AppendEncode(b, []byte(name))
}

// ensureProject creates the account's project called name at now unless it
// exists.
func ensureProject(txn *badger.Txn, accountID, name string, now int64) error {
	key := projectKey(accountID, name)
	if found, err := exists(txn, key); err != nil || found {
		return err
	}
	return setProto(txn, key, &statev1.Project{Name: name, CreatedUnixMs: now})
}

// Projects returns the account's projects in name (byte) order.
func (s *Store) Projects(accountID string) ([]*statev1.Project, error) {
	var out []*statev1.Project
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, k(prefixProject, accountID, ""), func() *statev1.Project { return new(statev1.Project) },
			func(p *statev1.Project) error { out = append(out, p); return nil })
	})
	return out, err
}
