package state

import (
	"errors"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"google.golang.org/protobuf/proto"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
	statev1 "lookout/internal/gen/lookout/state/v1"
)

// requireAccountsCoherent checks every account the valueCache keeps against
// the database: the account, its quota, its monitor count, its creation
// window (when read) and its key answers.
func requireAccountsCoherent(t *testing.T, s *Store) {
	t.Helper()
	c := s.values
	if len(c.pendingAccts) != 0 {
		t.Errorf("%d accounts staged outside an apply", len(c.pendingAccts))
	}
	err := s.view(func(txn *badger.Txn) error {
		for id, a := range c.accts {
			acct := new(statev1.Account)
			err := getProto(txn, k(prefixAccount, id), acct)
			switch {
			case errors.Is(err, ErrNotFound):
				if a.acct != nil {
					t.Errorf("account %q cached, absent in the database", id)
				}
				continue
			case err != nil:
				return err
			case a.acct == nil:
				t.Errorf("account %q cached as absent, present in the database", id)
				continue
			case !proto.Equal(acct, a.acct):
				t.Errorf("account %q cached as %v, the database has %v", id, a.acct, acct)
			}
			q, err := getQuota(txn, id)
			if err != nil {
				return err
			}
			if !proto.Equal(q, a.quota) {
				t.Errorf("quota of %q cached as %v, the database has %v", id, a.quota, q)
			}
			n, err := readUint64(txn, monitorCountKey(id))
			if err != nil {
				return err
			}
			if n != a.monitors {
				t.Errorf("monitor count of %q cached as %d, the database has %d", id, a.monitors, n)
			}
			if a.created.loaded {
				w, err := readCreationWindow(txn, id)
				if err != nil {
					return err
				}
				if w.minute != a.created.minute || w.count != a.created.count {
					t.Errorf("creation window of %q cached as %+v, the database has %+v", id, a.created, w)
				}
			}
			for keyID, ok := range a.keys {
				is, err := isIngestKey(txn, id, keyID)
				if err != nil {
					return err
				}
				if is != ok {
					t.Errorf("key %q of %q cached as ingest=%v, the database says %v", keyID, id, ok, is)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// accountWorkload changes what the account cache keeps between and among
// ingest batches: plans, keys, monitors deleted and created, in separate
// applies and within one transaction.
func accountWorkload(t *testing.T, s *Store) []*raftv1.Result {
	t.Helper()
	one := int64(1)
	p := plan("guarded")
	p.MonitorsCreatedPerMinute = proto.Int64(2)
	var res []*raftv1.Result
	res = append(res, apply(t, s,
		newAccount("a"), newAccount("b"), setPlan("a", p),
		createKey(key("a", "ik", raftv1.KeyType_KEY_TYPE_INGEST)),
		createKey(key("b", "ik", raftv1.KeyType_KEY_TYPE_INGEST)),
	)...)
	res = append(res, apply(t, s, ingestNow(ping("a", "m1", "run", t0, withKey("ik")), ping("b", "m1", "run", t0, withKey("ik"))))...)
	res = append(res, apply(t, s, ingestNow(ping("a", "m2", "run", t0, withKey("ik")), ping("a", "m3", "run", t0, withKey("ik"))))...)
	// One transaction: the plan lowers the monitor limit and the key is
	// revoked between ingest batches.
	res = append(res, apply(t, s,
		ingestNow(ping("a", "m1", "complete", t0+1, withKey("ik"))),
		setPlan("a", limits(&one, nil, 0)),
		ingestNow(ping("a", "m4", "run", t0+2, withKey("ik")), ping("a", "m1", "run", t0+2, withKey("ik"))),
		revokeKey("a", "ik"),
		ingestNow(ping("a", "m1", "complete", t0+3, withKey("ik")), ping("b", "m1", "complete", t0+3, withKey("ik"))),
	)...)
	id := mustMonitor(t, s, "b", "m1").GetUuid()
	res = append(res, apply(t, s, deleteMonitor("b", id))...)
	res = append(res, apply(t, s, ingestNow(ping("b", "m1", "run", t0+4, withKey("ik")), ping("b", "m2", "run", t0+4, withKey("ik"))))...)
	return res
}

// TestAccountCacheCoherent: the account cache changes no result and no
// state, follows every command that changes an account between and among
// ingest batches, and is used.
func TestAccountCacheCoherent(t *testing.T) {
	with, r1 := withAndWithoutCache(t, accountWorkload)
	// What the workload must have done, cache or not.
	ingest := r1[len(r1)-7:]
	requireOutcomes(t, ingest[0].GetEvents(), stored)
	requireOutcomes(t, ingest[2].GetEvents(), raftv1.EventOutcome_EVENT_OUTCOME_MONITOR_LIMIT, stored)
	requireOutcomes(t, ingest[4].GetEvents(), unauthorized, stored)
	requireOutcomes(t, ingest[6].GetEvents(), stored, stored)
	if len(with.values.accts) != 1 {
		t.Fatalf("%d accounts cached after the last ingest batch, want 1 (b)", len(with.values.accts))
	}
	requireAccountsCoherent(t, with)
}

// TestAccountCacheDroppedByOtherCommands: a command other than an ingest
// batch drops the accounts, even one that fails.
func TestAccountCacheDroppedByOtherCommands(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	ingestOK(t, s, ingestNow(ping("a", "job", "run", t0)))
	if len(s.values.accts) != 1 {
		t.Fatalf("%d accounts cached, want 1", len(s.values.accts))
	}
	requireAccountsCoherent(t, s)
	apply(t, s, newAccount("a")) // already exists: refused
	if len(s.values.accts) != 0 {
		t.Fatalf("%d accounts cached after another command, want 0", len(s.values.accts))
	}
}
