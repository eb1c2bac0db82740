package state

import (
	"github.com/dgraph-io/badger/v4"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Ended panel sessions. Sessions are signed cookies, valid on every node
// without a record; signing out (EndSession) records the session's id (the
// random nonce of its cookie) so that every node refuses a copy of the
// cookie too:
//
//	session-end:<session id>                   -> statev1.EndedSession
//	session-end-time:<uint64 ms><session id>   -> empty; by expiry, for pruning
//
// A record is pruned by PruneEvents once its session has been expired for
// sessionEndGraceMillis of leader time: the panel refuses an expired cookie
// by its own clock, and the grace covers nodes whose clocks lag the
// leader's. The records are keyed by session so that ending every session
// of a user (a removed user) can be added beside them without changing
// them.

// sessionEndGraceMillis is how long an ended session is kept after it
// would have expired.
const sessionEndGraceMillis = 60 * 60 * 1000

// MaxSessionMillis bounds how far after the command's time an ended
// session may expire, so that no record is kept for ever.
const MaxSessionMillis = 400 * 24 * 60 * 60 * 1000

func sessionEndTimeKey(ms int64, id string) []byte {
	return append(kb(prefixSessionEndTime, u64(uint64(max(ms, 0)))), id...)
}

// applyEndSession records an ended session. Ending one already ended
// changes nothing.
func applyEndSession(txn *badger.Txn, now int64, c *raftv1.EndSession) (*raftv1.Result, error) {
	if c.GetSessionId() == "" || c.GetAccountId() == "" {
		return invalid("end session: session id and account id are required"), nil
	}
	if c.GetExpiresUnixMs() <= 0 || c.GetExpiresUnixMs() > now+MaxSessionMillis {
		return invalid("end session: the expiry must be within %d days of the command's time", MaxSessionMillis/(24*60*60*1000)), nil
	}
	key := k(prefixSessionEnd, c.GetSessionId())
	if done, err := exists(txn, key); err != nil || done {
		return ok(), err
	}
	rec := &statev1.EndedSession{AccountId: c.GetAccountId(), ExpiresUnixMs: c.GetExpiresUnixMs(), EndedUnixMs: now}
	if err := setProto(txn, key, rec); err != nil {
		return nil, err
	}
	return ok(), txn.Set(sessionEndTimeKey(c.GetExpiresUnixMs(), c.GetSessionId()), nil)
}

// pruneEndedSessions forgets up to limit ended sessions that expired
// before cutoff and returns how many.
func pruneEndedSessions(txn *badger.Txn, cutoff int64, limit int) (int, error) {
	if cutoff <= 0 || limit <= 0 {
		return 0, nil
	}
	expired := keysBefore(txn, prefixSessionEndTime, kb(prefixSessionEndTime, u64(uint64(cutoff))), limit)
	for _, key := range expired {
		if err := txn.Delete(kb(prefixSessionEnd, key[len(prefixSessionEndTime)+8:])); err != nil {
			return 0, err
		}
		if err := txn.Delete(key); err != nil {
			return 0, err
		}
	}
	return len(expired), nil
}

// SessionEnded tells whether the panel session id was ended (signed out)
// and not yet pruned. The answer is cached with the keys and accounts
// (authCache), dropped when a session is ended.
func (s *Store) SessionEnded(id string) (bool, error) {
	if ended, ok := s.auth.sessionEnded(id); ok {
		return ended, nil
	}
	gen := s.auth.generation()
	var ended bool
	err := s.view(func(txn *badger.Txn) error {
		var err error
		ended, err = exists(txn, k(prefixSessionEnd, id))
		return err
	})
	if err != nil {
		return false, err
	}
	s.auth.putSession(gen, id, ended)
	return ended, nil
}
