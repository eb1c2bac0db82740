package state

import (
	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// applyCreateAgentToken registers an agent token by its hash.
func applyCreateAgentToken(txn *badger.Txn, now int64, c *raftv1.CreateAgentToken) (*raftv1.Result, error) {
	if c.GetId() == "" || c.GetRegion() == "" || len(c.GetHash()) == 0 {
		return invalid("create agent token: id, region and hash are required"), nil
	}
	key := kb(prefixAgentToken, c.GetHash())
	if taken, err := exists(txn, key); err != nil || taken {
		return conflict("agent token hash already in use"), err
	}
	t := &statev1.AgentToken{Id: c.GetId(), Region: c.GetRegion(), Name: c.GetName(), Hash: c.GetHash(), CreatedUnixMs: now}
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
