package state

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// The audit log: one entry per change made to an account (auditcmds.go
// says which commands write which), written by the apply of the command
// that makes the change, in its transaction, so that there is no change
// without its entry and no entry without its change. An entry's id is the
// raft index of its command and its position among the entries the
// command wrote; its time is the command's. Reads write nothing.
//
//	audit:<account id>:<uint64 raft index><uint32 position> -> statev1.AuditEntry
//	audit-n:<account id>               -> uint64, the account's entries
//	audit-due:<uint64 ms><account id>  -> empty; at or before the time of the
//	                                      account's oldest entry (PruneEvents)
//
// An account keeps at most MaxAuditEntries: a command that goes past it
// deletes the oldest in its own transaction. PruneEvents deletes the
// entries made before its audit_before_unix_ms (the leader's
// --audit-retention) the way it deletes old events: by one due key per
// account, which may lag behind the oldest entry (the bound's deletions
// do not move it) but is never after it.

// The actor types of an audit entry (raftv1.Actor.type).
const (
	ActorUser     = "user"
	ActorKey      = "key"
	ActorOperator = "operator"
)

// MaxAuditEntries bounds the audit log of one account; the oldest entries
// are dropped first.
const MaxAuditEntries = 10_000

// MaxActorBytes bounds the encoded actor of a command.
const MaxActorBytes = 512

// AuditPos is the position of an entry in its account's log: its
// command's raft index and its place among that command's entries.
type AuditPos struct {
	Index    uint64
	Position uint32
}

// AuditPosOf is the position of entry e.
func AuditPosOf(e *statev1.AuditEntry) AuditPos {
	return AuditPos{Index: e.GetRaftIndex(), Position: e.GetPosition()}
}

func auditKey(accountID string, p AuditPos) []byte {
	key := k(prefixAudit, accountID, "")
	key = binary.BigEndian.AppendUint64(key, p.Index)
	return binary.BigEndian.AppendUint32(key, p.Position)
}

func auditDueKey(ms int64, accountID string) []byte {
	return append(kb(prefixAuditDue, u64(uint64(max(ms, 0)))), accountID...)
}

// auditWriter writes the entries of one command: positions from 0, the
// command's time and (unless an entry has its own) its actor. flush
// counts them per account and applies the bound.
type auditWriter struct {
	txn   *badger.Txn
	index uint64
	now   int64
	actor *raftv1.Actor
	next  uint32
	added map[string]int // entries per account
	order []string       // accounts in the order of their first entry
}

func newAuditWriter(txn *badger.Txn, ctx applyCtx, actor *raftv1.Actor) *auditWriter {
	return &auditWriter{txn: txn, index: ctx.index, now: ctx.now, actor: actor, added: map[string]int{}}
}

// add writes one entry of the account: actor nil is the command's.
func (w *auditWriter) add(accountID string, actor *raftv1.Actor, action string, target *statev1.AuditTarget, diff map[string][2]any) error {
	if actor == nil {
		actor = w.actor
	}
	target.Name = cutString(target.GetName(), maxAuditValueBytes)
	e := &statev1.AuditEntry{RaftIndex: w.index, Position: w.next, AtUnixMs: w.now, Actor: actor,
		Action: action, Target: target, DiffJson: diffJSON(diff)}
	w.next++
	if err := setProto(w.txn, auditKey(accountID, AuditPosOf(e)), e); err != nil {
		return err
	}
	if w.added[accountID] == 0 {
		w.order = append(w.order, accountID)
	}
	w.added[accountID]++
	return nil
}

// flush updates the count of each account the command wrote entries of,
// files its due key when it had none, and deletes its oldest entries past
// MaxAuditEntries.
func (w *auditWriter) flush() error {
	for _, acct := range w.order {
		countKey := k(prefixAuditCount, acct)
		n, err := readUint64(w.txn, countKey)
		if err != nil {
			return err
		}
		if n == 0 {
			if err := w.txn.Set(auditDueKey(w.now, acct), nil); err != nil {
				return err
			}
		}
		n += uint64(w.added[acct])
		if over := int(n) - MaxAuditEntries; over > 0 {
			old := keysBefore(w.txn, k(prefixAudit, acct, ""), auditKey(acct, AuditPos{Index: w.index}), over)
			for _, key := range old {
				if err := w.txn.Delete(key); err != nil {
					return err
				}
			}
			n -= uint64(len(old))
		}
		if err := w.txn.Set(countKey, u64(n)); err != nil {
			return err
		}
	}
	return nil
}

// pruneAudit deletes, oldest first, the entries made before cutoff, at
// most limit, visiting the accounts whose due key is before it, at most
// limit of them. full reports that it stopped at limit with due keys left.
func pruneAudit(txn *badger.Txn, cutoff int64, limit int) (deleted int, full bool, err error) {
	if cutoff <= 0 || limit <= 0 {
		return 0, false, nil
	}
	due := keysBefore(txn, prefixAuditDue, kb(prefixAuditDue, u64(uint64(cutoff))), limit+1)
	for i, key := range due {
		if i == limit || deleted == limit {
			return deleted, true, nil
		}
		if len(key) < len(prefixAuditDue)+8 {
			return 0, false, fmt.Errorf("bad audit due key %q", key)
		}
		n, err := pruneAccountAudit(txn, key, string(key[len(prefixAuditDue)+8:]), cutoff, limit-deleted)
		if err != nil {
			return 0, false, err
		}
		deleted += n
	}
	return deleted, false, nil
}

// pruneAccountAudit deletes the account's entries made before cutoff,
// oldest first, at most limit, and moves its due key (dueKey) to the time
// of the first entry it keeps (deleting it with the last entry). When it
// stops at limit the key stays: it is still due.
func pruneAccountAudit(txn *badger.Txn, dueKey []byte, acct string, cutoff int64, limit int) (int, error) {
	var old [][]byte
	next := int64(-1) // the time of the first entry kept; -1: none
	stopped := false
	it := txn.NewIterator(badger.IteratorOptions{Prefix: k(prefixAudit, acct, "")})
	for it.Rewind(); it.Valid(); it.Next() {
		var e statev1.AuditEntry
		if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, &e) }); err != nil {
			it.Close()
			return 0, fmt.Errorf("audit entry %q: %w", it.Item().Key(), err)
		}
		if e.GetAtUnixMs() >= cutoff {
			next = e.GetAtUnixMs()
			break
		}
		if len(old) == limit {
			stopped = true
			break
		}
		old = append(old, it.Item().KeyCopy(nil))
	}
	it.Close()
	for _, key := range old {
		if err := txn.Delete(key); err != nil {
			return 0, err
		}
	}
	countKey := k(prefixAuditCount, acct)
	n, err := readUint64(txn, countKey)
	if err != nil {
		return 0, err
	}
	n -= min(n, uint64(len(old)))
	if err := txn.Set(countKey, u64(n)); err != nil {
		return 0, err
	}
	if stopped {
		return len(old), nil
	}
	if err := txn.Delete(dueKey); err != nil {
		return 0, err
	}
	if next < 0 {
		return len(old), txn.Delete(countKey)
	}
	return len(old), txn.Set(auditDueKey(next, acct), nil)
}

// AuditFilter chooses entries of an audit log; an empty field matches
// every entry.
type AuditFilter struct {
	// Actor matches the actor's id, name or type (user, key, operator).
	Actor string
	// Monitor matches entries about a monitor by its uuid or name.
	Monitor string
	// Action matches the action exactly (apply, create, key.create ...).
	Action string
}

// Matches tells whether e passes the filter.
func (f AuditFilter) Matches(e *statev1.AuditEntry) bool {
	if a := e.GetActor(); f.Actor != "" && f.Actor != a.GetId() && f.Actor != a.GetName() && f.Actor != a.GetType() {
		return false
	}
	if t := e.GetTarget(); f.Monitor != "" && (t.GetKind() != AuditMonitor || f.Monitor != t.GetUuid() && f.Monitor != t.GetName()) {
		return false
	}
	return f.Action == "" || f.Action == e.GetAction()
}

// AuditLog returns up to limit entries of the account's audit log that
// pass f, newest first, made before position before (nil: from the
// newest). An account keeps at most MaxAuditEntries, so a filter that
// matches few reads at most that many.
func (s *Store) AuditLog(accountID string, before *AuditPos, f AuditFilter, limit int) ([]*statev1.AuditEntry, error) {
	var out []*statev1.AuditEntry
	prefix := k(prefixAudit, accountID, "")
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true})
		defer it.Close()
		start := append(bytes.Clone(prefix), bytes.Repeat([]byte{0xff}, 12)...)
		if before != nil {
			start = auditKey(accountID, *before)
		}
		for it.Seek(start); it.Valid() && len(out) < limit; it.Next() {
			if before != nil && bytes.Equal(it.Item().Key(), start) {
				continue
			}
			e := new(statev1.AuditEntry)
			if err := it.Item().Value(func(v []byte) error { return proto.Unmarshal(v, e) }); err != nil {
				return fmt.Errorf("audit entry %q: %w", it.Item().Key(), err)
			}
			if f.Matches(e) {
				out = append(out, e)
			}
		}
		return nil
	})
	return out, err
}
