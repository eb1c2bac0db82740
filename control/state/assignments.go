package state

import (
	"errors"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// changesAssignments tells whether cmd can change what agents are
// assigned: checks (monitors), ingest keys, accounts and their plans, and
// the agent tokens of a region (which of them serves each check).
func changesAssignments(cmd *raftv1.Command) bool {
	switch cmd.GetOp().(type) {
	case *raftv1.Command_PutMonitors, *raftv1.Command_DeleteMonitor,
		*raftv1.Command_CreateAccount, *raftv1.Command_SetPlan,
		*raftv1.Command_CreateKey, *raftv1.Command_RevokeKey,
		*raftv1.Command_CreateAgentToken, *raftv1.Command_RevokeAgentToken:
		return true
	}
	return false
}

// AssignmentsChanged returns a channel that is closed once an entry that
// may change agent assignments (checks, ingest keys, plans, agent tokens;
// a restore) is
// applied after the call. Take the channel before reading the assignments,
// then wait on it: a change between the two is never missed. Unlike the
// leader's change feed (watch.go), it is a broadcast to any number of
// readers, on every node, and says only "read again".
func (s *Store) AssignmentsChanged() <-chan struct{} {
	s.assignMu.Lock()
	defer s.assignMu.Unlock()
	return s.assignCh
}

// signalAssignments wakes the readers of AssignmentsChanged.
func (s *Store) signalAssignments() {
	s.assignMu.Lock()
	defer s.assignMu.Unlock()
	close(s.assignCh)
	s.assignCh = make(chan struct{})
}

// AgentKey is an ingest key as agents receive it: the key and its
// account's plan.
type AgentKey struct {
	Key  *raftv1.Key
	Plan *raftv1.Plan
}

// Assignments is what the agents of one token are assigned, read from one
// view of the state.
type Assignments struct {
	// Checks are the enabled checks (every kind but ping) whose
	// regions include the token's region, of the accounts the token
	// serves, by uuid.
	Checks []*statev1.Monitor
	// Keys are the ingest keys of the accounts the token serves (every
	// account's for a token that names none), by key id.
	Keys []AgentKey
	// Tokens are every agent token of the region, by id: which of them
	// serves a check's account is where the pool may run it.
	Tokens []*statev1.AgentToken
}

// AgentAssignments reads the assignments of the agents of a token of
// region that serves accounts (nil or empty: every account).
func (s *Store) AgentAssignments(region string, accounts []string) (*Assignments, error) {
	serves := func(account string) bool { return len(accounts) == 0 || slices.Contains(accounts, account) }
	out := &Assignments{}
	err := s.view(func(txn *badger.Txn) error {
		err := scanProto(txn, prefixMonitor, func() *statev1.Monitor { return new(statev1.Monitor) }, func(m *statev1.Monitor) error {
			if m.GetKind() != KindPing && m.GetEnabled() && slices.Contains(m.GetRegions(), region) && serves(m.GetAccountId()) {
				out.Checks = append(out.Checks, m)
			}
			return nil
		})
		if err != nil {
			return err
		}
		err = scanProto(txn, prefixAgentToken, func() *statev1.AgentToken { return new(statev1.AgentToken) }, func(t *statev1.AgentToken) error {
			if t.GetRegion() == region {
				out.Tokens = append(out.Tokens, t)
			}
			return nil
		})
		if err != nil {
			return err
		}
		type acctPlan struct {
			plan  *raftv1.Plan
			found bool
		}
		plans := map[string]acctPlan{}
		return scanProto(txn, prefixKeyHash, func() *raftv1.Key { return new(raftv1.Key) }, func(key *raftv1.Key) error {
			if key.GetType() != raftv1.KeyType_KEY_TYPE_INGEST || !serves(key.GetAccountId()) {
				return nil
			}
			p, ok := plans[key.GetAccountId()]
			if !ok {
				var acct statev1.Account
				err := getProto(txn, k(prefixAccount, key.GetAccountId()), &acct)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
				p = acctPlan{plan: acct.GetPlan(), found: err == nil}
				plans[key.GetAccountId()] = p
			}
			if !p.found {
				return nil // a key without its account is no assignment
			}
			out.Keys = append(out.Keys, AgentKey{Key: key, Plan: p.plan})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out.Checks, func(a, b *statev1.Monitor) int { return strings.Compare(a.GetUuid(), b.GetUuid()) })
	slices.SortFunc(out.Keys, func(a, b AgentKey) int { return strings.Compare(a.Key.GetId(), b.Key.GetId()) })
	slices.SortFunc(out.Tokens, func(a, b *statev1.AgentToken) int { return strings.Compare(a.GetId(), b.GetId()) })
	return out, nil
}
