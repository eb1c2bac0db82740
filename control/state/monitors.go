package state

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"lookout/internal/checkrun"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// Monitor kinds; each is its own name space.
const (
	KindPing      = "ping"
	KindHTTPCheck = checkrun.KindHTTPCheck
	KindSSLCheck  = checkrun.KindSSLCheck
	KindTCPCheck  = checkrun.KindTCPCheck
	KindDNSCheck  = checkrun.KindDNSCheck
)

// DefaultPingTimeoutSeconds is the timeout of a ping monitor created by its
// first ping.
const DefaultPingTimeoutSeconds = 3600

// monitorNamespace is the UUID namespace of monitors created by the state
// machine (which draws no random numbers).
var monitorNamespace = uuid.MustParse("62d804eb-228d-496b-a363-d88fed3ed8d2")

// newMonitorUUID derives the uuid of a monitor created by event pos of the
// entry at index. No two events share (index, pos), so no two monitors
// share the input; the account and name only make the value less guessable
// across clusters. The same entry gives the same uuid on every node.
func newMonitorUUID(index uint64, pos int, accountID, name string) string {
	in := accountID + "\x00" + name + "\x00" + strconv.FormatUint(index, 10) + "\x00" + strconv.Itoa(pos)
	return uuid.NewSHA1(monitorNamespace, []byte(in)).String()
}

func monitorKey(id string) []byte { return k(prefixMonitor, id) }

func monitorNameKey(accountID, kind, name string) []byte {
	return k(prefixMonitorName, accountID, kind, name)
}

func monitorCountKey(accountID string) []byte { return k(prefixMonitorCount, accountID) }

// getMonitor reads the monitor with uuid id.
func getMonitor(txn *badger.Txn, id string) (*statev1.Monitor, error) {
	m := new(statev1.Monitor)
	if err := getProto(txn, monitorKey(id), m); err != nil {
		return nil, err
	}
	return m, nil
}

// getMonitorIn reads the monitor with uuid id in an apply, through values.
func getMonitorIn(txn *badger.Txn, values *valueCache, id string) (*statev1.Monitor, error) {
	key := monitorKey(id)
	v, err := values.get(txn, key)
	if err != nil {
		return nil, err
	}
	m := new(statev1.Monitor)
	if err := proto.Unmarshal(v, m); err != nil {
		return nil, fmt.Errorf("decode %q: %w", key, err)
	}
	return m, nil
}

// applyDeleteMonitor removes a monitor of an account with its name (a new
// monitor of that name starts with an empty history), its open runs and its
// events. A monitor with more than MaxPruneEvents events keeps the rest
// for PruneEvents to remove (an ev-purge: marker), so that the entry fits
// one transaction; they are no longer reachable meanwhile.
//
// Quota: when the deletion takes the account from its monitor limit (or
// above) to below it and the account is suspended, the suspension ends
// (the quota rule "the account drops back under its monitor limit"). We read
// "drops back under" as crossing the limit, and require the plan to have
// one: deleting a monitor is not a way out of a suspension otherwise.
func applyDeleteMonitor(txn *badger.Txn, ctx applyCtx, c *raftv1.DeleteMonitor) (*raftv1.Result, error) {
	now := ctx.now
	mon, err := getMonitorIn(txn, ctx.values, c.GetMonitorUuid())
	if errors.Is(err, ErrNotFound) || (err == nil && mon.GetAccountId() != c.GetAccountId()) {
		return notFound("monitor %s not found", c.GetMonitorUuid()), nil
	}
	if err != nil {
		return nil, err
	}
	id := mon.GetUuid()
	for _, key := range [][]byte{monitorKey(id), monitorNameKey(mon.GetAccountId(), mon.GetKind(), mon.GetName()), runsKey(id), alertSinceKey(id)} {
		if err := ctx.values.del(txn, key); err != nil {
			return nil, err
		}
	}
	if err := txn.Delete(uptimeKey(id)); err != nil {
		return nil, err
	}
	if due := mon.GetPing().GetEventsDueUnixMs(); due != 0 {
		if err := txn.Delete(eventDueKey(due, id)); err != nil {
			return nil, err
		}
	}
	if _, err := purgeEvents(txn, ctx.values, id, MaxPruneEvents); err != nil {
		return nil, err
	}
	if err := deleteExecutions(txn, ctx.values, id); err != nil {
		return nil, err
	}
	countKey := monitorCountKey(mon.GetAccountId())
	before, err := readUint64(txn, countKey)
	if err != nil {
		return nil, err
	}
	after := before
	if after > 0 {
		after--
	}
	if err := txn.Set(countKey, u64(after)); err != nil {
		return nil, err
	}
	var acct statev1.Account
	if err := getProto(txn, k(prefixAccount, mon.GetAccountId()), &acct); errors.Is(err, ErrNotFound) {
		return ok(), nil
	} else if err != nil {
		return nil, err
	}
	if limit, has := monitorLimit(acct.GetPlan()); has && int64(before) >= limit && int64(after) < limit {
		if err := resumeIfSuspended(txn, &acct, now); err != nil {
			return nil, err
		}
	}
	return ok(), nil
}

// Monitor returns the account's monitor with uuid id; ErrNotFound also when
// it belongs to another account.
func (s *Store) Monitor(accountID, id string) (*statev1.Monitor, error) {
	var m *statev1.Monitor
	err := s.view(func(txn *badger.Txn) error {
		var err error
		m, err = getMonitor(txn, id)
		if err == nil && m.GetAccountId() != accountID {
			err = ErrNotFound
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// MonitorByName returns the account's monitor of kind called name.
func (s *Store) MonitorByName(accountID, kind, name string) (*statev1.Monitor, error) {
	var m *statev1.Monitor
	err := s.view(func(txn *badger.Txn) error {
		id, err := getRaw(txn, monitorNameKey(accountID, kind, name))
		if err != nil {
			return err
		}
		m, err = getMonitor(txn, string(id))
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Monitors returns the account's monitors ordered by kind, then name
// (MonitorsAfter, the whole list).
func (s *Store) Monitors(accountID string) ([]*statev1.Monitor, error) {
	return s.MonitorsAfter(accountID, "", "", "", 0)
}

// MonitorCount is the number of monitors of the account (all kinds).
func (s *Store) MonitorCount(accountID string) (int64, error) {
	var n uint64
	err := s.view(func(txn *badger.Txn) error {
		var err error
		n, err = readUint64(txn, monitorCountKey(accountID))
		return err
	})
	return int64(n), err
}
