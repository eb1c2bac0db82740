package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// longActor is an actor at its bound.
func longActor() *raftv1.Actor {
	return &raftv1.Actor{Type: ActorUser, Id: long(64), Name: long(MaxActorBytes - 100)}
}

// auditWorstCases are the worst cases of the audit log (TestWorstCasePerCommandType):
// a sign-in with the longest actor, and the largest applies of an account
// whose log is full, so that each of their entries also deletes the oldest
// (base holds the other cases).
func auditWorstCases(base map[string]worstCase) map[string]worstCase {
	full := func(base worstCase) worstCase {
		setup := base.setup
		base.setup = func(t *testing.T, s *Store) {
			if setup != nil {
				setup(t, s)
			}
			fillAudit(t, s, "a", MaxAuditEntries, t0-1)
		}
		worst := base.worst
		base.worst = func(t *testing.T, s *Store) *raftv1.Command {
			c := worst(t, s)
			c.Actor = longActor()
			c.GetPutMonitors().Apply = true
			return c
		}
		return base
	}
	return map[string]worstCase{
		"record_sign_in": {
			worst: func(*testing.T, *Store) *raftv1.Command { return by(longActor(), signIn("a")) },
			want:  raftv1.Status_STATUS_OK,
			over:  by(&raftv1.Actor{Type: ActorUser, Name: long(MaxActorBytes)}, signIn("a")),
		},
		"put_monitors/renames, audit log full": full(putMonitorsWorstCase()),
		"put_monitors/creates, audit log full": full(base["put_monitors/creates"]),
	}
}
