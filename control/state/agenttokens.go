package state

import (
	"slices"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// MaxAgentTokenAccounts bounds the accounts one agent token names.
const MaxAgentTokenAccounts = 100

// applyCreateAgentToken registers an agent token by its hash. The accounts
// it names (if any) must exist; they are kept sorted, once each.
func applyCreateAgentToken(txn *badger.Txn, now int64, c *raftv1.CreateAgentToken) (*raftv1.Result, error) {
	if c.GetId() == "" || c.GetRegion() == "" || len(c.GetHash()) == 0 {
		return invalid("create agent token: id, region and hash are required"), nil
	}
	accounts := slices.Compact(slices.Sorted(slices.Values(c.GetAccounts())))
	if len(accounts) > MaxAgentTokenAccounts {
		return invalid("create agent token: at most %d accounts, got %d", MaxAgentTokenAccounts, len(accounts)), nil
	}
	for _, a := range accounts {
		if a == "" {
			return invalid("create agent token: an account id is empty"), nil
		}
		if found, err := exists(txn, k(prefixAccount, a)); err != nil || !found {
			return notFound("account %s not found", a), err
		}
	}
	key := kb(prefixAgentToken, c.GetHash())
	if taken, err := exists(txn, key); err != nil || taken {
		return conflict("agent token hash already in use"), err
	}
	t := &statev1.AgentToken{Id: c.GetId(), Region: c.GetRegion(), Name: c.GetName(), Hash: c.GetHash(), CreatedUnixMs: now, Accounts: accounts}
	return ok(), setProto(txn, key, t)
}

// AgentTokenByHash returns the agent token whose secret hashes to hash.
func (s *Store) AgentTokenByHash(hash []byte) (*statev1.AgentToken, error) {
	var t statev1.AgentToken
	err := s.view(func(txn *badger.Txn) error { return getProto(txn, kb(prefixAgentToken, hash), &t) })
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// ServesAccount tells whether the agents of token t may serve account:
// a token that names no accounts serves every account.
func ServesAccount(t *statev1.AgentToken, account string) bool {
	return len(t.GetAccounts()) == 0 || slices.Contains(t.GetAccounts(), account)
}

// applyRevokeAgentToken removes the agent token with the command's id.
// Tokens are few (one per region or agent), so it is found by a scan of
// the tokens rather than through an index.
func applyRevokeAgentToken(txn *badger.Txn, c *raftv1.RevokeAgentToken) (*raftv1.Result, error) {
	if c.GetId() == "" {
		return invalid("revoke agent token: id is required"), nil
	}
	var found []byte
	err := scanProto(txn, prefixAgentToken, func() *statev1.AgentToken { return new(statev1.AgentToken) }, func(t *statev1.AgentToken) error {
		if found == nil && t.GetId() == c.GetId() {
			found = kb(prefixAgentToken, t.GetHash())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return notFound("agent token %s not found", c.GetId()), nil
	}
	return ok(), txn.Delete(found)
}
