package state

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// MaxAgentTokenAccounts bounds the accounts one agent token names.
const MaxAgentTokenAccounts = 100

// applyCreateAgentToken registers an agent token by its hash. The accounts
// it names (if any) must exist; they are kept sorted, once each. A token
// that replaces another must name that token's region and accounts, and
// inherits its valid_from.
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
	if id := c.GetReplaces(); id != "" {
		old, err := agentTokenByID(txn, id)
		if err != nil || old == nil {
			return notFound("agent token %s not found", id), err
		}
		if old.GetRegion() != t.GetRegion() || !slices.Equal(old.GetAccounts(), accounts) {
			return conflict("agent token %s serves another region or other accounts", id), nil
		}
		t.Replaces, t.ValidFromUnixMs = id, AgentTokenValidFrom(old)
	}
	return ok(), setProto(txn, key, t)
}

// AgentTokenValidFrom is the earliest receipt time of an event the agents
// of t may forward: when t, or the first token it was rotated from, was
// made.
func AgentTokenValidFrom(t *statev1.AgentToken) int64 {
	if v := t.GetValidFromUnixMs(); v > 0 {
		return v
	}
	return t.GetCreatedUnixMs()
}

// agentTokenByID finds a live agent token by its id (nil when there is
// none). Tokens are few (one per region or agent), so it scans them rather
// than keep an index.
func agentTokenByID(txn *badger.Txn, id string) (*statev1.AgentToken, error) {
	var found *statev1.AgentToken
	err := scanProto(txn, prefixAgentToken, func() *statev1.AgentToken { return new(statev1.AgentToken) }, func(t *statev1.AgentToken) error {
		if found == nil && t.GetId() == id {
			found = t
		}
		return nil
	})
	return found, err
}

// AgentTokens returns the live agent tokens, by region, then name, then id.
func (s *Store) AgentTokens() ([]*statev1.AgentToken, error) {
	var out []*statev1.AgentToken
	err := s.view(func(txn *badger.Txn) error {
		return scanProto(txn, prefixAgentToken, func() *statev1.AgentToken { return new(statev1.AgentToken) }, func(t *statev1.AgentToken) error {
			out = append(out, t)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b *statev1.AgentToken) int {
		return cmp.Or(strings.Compare(a.GetRegion(), b.GetRegion()), strings.Compare(a.GetName(), b.GetName()), strings.Compare(a.GetId(), b.GetId()))
	})
	return out, err
}

// AgentToken returns the live agent token with id.
func (s *Store) AgentToken(id string) (*statev1.AgentToken, error) {
	var t *statev1.AgentToken
	err := s.view(func(txn *badger.Txn) (err error) {
		t, err = agentTokenByID(txn, id)
		return err
	})
	if err == nil && t == nil {
		err = fmt.Errorf("agent token %s: %w", id, ErrNotFound)
	}
	return t, err
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
func applyRevokeAgentToken(txn *badger.Txn, c *raftv1.RevokeAgentToken) (*raftv1.Result, error) {
	if c.GetId() == "" {
		return invalid("revoke agent token: id is required"), nil
	}
	t, err := agentTokenByID(txn, c.GetId())
	if err != nil || t == nil {
		return notFound("agent token %s not found", c.GetId()), err
	}
	return ok(), txn.Delete(kb(prefixAgentToken, t.GetHash()))
}
