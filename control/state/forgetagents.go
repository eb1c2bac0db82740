package state

import (
	"errors"

	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Bounds of one ForgetAgents.
const (
	// MaxForgetAgents bounds its agent ids.
	MaxForgetAgents = 64
	// MaxForgetMarks bounds the marks of a region it removes: keys of up
	// to two MaxKeyPartBytes parts, a quarter of a Small transaction.
	MaxForgetMarks = 128
)

// applyForgetAgents removes agents' records, or forgets a region left
// without agents (forgetRegion).
func applyForgetAgents(txn *badger.Txn, ctx applyCtx, c *raftv1.ForgetAgents) (*raftv1.Result, error) {
	ids := c.GetAgentIds()
	switch {
	case c.GetRegion() != "" && len(ids) == 0:
		return forgetRegion(txn, c.GetRegion())
	case c.GetRegion() != "" || len(ids) == 0 || len(ids) > MaxForgetAgents:
		return invalid("forget agents: 1 to %d agent ids, or a region", MaxForgetAgents), nil
	case c.GetUnseenForMs() < 0:
		return invalid("forget agents: unseen_for_ms must not be negative"), nil
	}
	forgot := int64(0)
	for _, id := range ids {
		a := new(statev1.Agent)
		err := getProto(txn, agentKey(id), a)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if c.GetUnseenForMs() > 0 && ctx.now-a.GetLastSeenUnixMs() < c.GetUnseenForMs() {
			continue // seen since the leader looked
		}
		if err := txn.Delete(agentKey(id)); err != nil {
			return nil, err
		}
		forgot++
	}
	if forgot == 0 && c.GetUnseenForMs() == 0 {
		return notFound("agent %s not found", ids[0]), nil
	}
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: forgot}, nil
}

// forgetRegion forgets a region no agent of which is left, so that it is
// no longer judged (no agent.offline, its monitors not unknown): up to
// MaxForgetMarks of its accounts' marks, and with the last of them its
// verdict. An account alerted agent.offline gets no agent.online: the
// region did not come back, it is gone. An agent of the region that
// reports later starts it afresh. A region that has an agent is left
// alone (the leader's view was older than the command).
func forgetRegion(txn *badger.Txn, region string) (*raftv1.Result, error) {
	left := false
	err := scanProto(txn, prefixAgent, func() *statev1.Agent { return new(statev1.Agent) }, func(a *statev1.Agent) error {
		left = left || a.GetRegion() == region
		return nil
	})
	if err != nil {
		return nil, err
	}
	if left {
		return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Stale: true, Message: "the region has agents"}, nil
	}
	var marks [][]byte
	more := false
	it := txn.NewIterator(badger.IteratorOptions{Prefix: regionAcctKey(region, "")})
	for it.Rewind(); it.Valid(); it.Next() {
		if len(marks) == MaxForgetMarks {
			more = true
			break
		}
		marks = append(marks, it.Item().KeyCopy(nil))
	}
	it.Close()
	for _, key := range marks {
		if err := txn.Delete(key); err != nil {
			return nil, err
		}
	}
	if !more {
		if err := txn.Delete(regionKey(region)); err != nil {
			return nil, err
		}
	}
	return &raftv1.Result{Status: raftv1.Status_STATUS_OK, Deleted: int64(len(marks))}, nil
}
