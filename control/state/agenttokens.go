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
