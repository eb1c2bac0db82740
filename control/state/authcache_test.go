package state

import (
	"bytes"
	"errors"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestAuthCacheFollowsAppliedChanges(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	hash := []byte("hash-a-ik")
	for range 2 { // the second read is served from the cache
		if k, err := s.KeyByHash(hash); err != nil || k.GetId() != "ik" {
			t.Fatalf("key: %v %v", k, err)
		}
		if a, err := s.Account("a"); err != nil || a.GetPlan().GetName() != "free" {
			t.Fatalf("account: %v %v", a, err)
		}
	}
	mustOK(t, s, setPlan("a", &raftv1.Plan{Name: "bigger"}))
	if a, _ := s.Account("a"); a.GetPlan().GetName() != "bigger" {
		t.Fatalf("plan after SetPlan: %q", a.GetPlan().GetName())
	}
	mustOK(t, s, revokeKey("a", "ik"))
	if _, err := s.KeyByHash(hash); !errors.Is(err, ErrNotFound) {
		t.Fatalf("revoked key still found: %v", err)
	}
	// A restore replaces everything, cache included.
	snap := dump(t, s)
	other := openStore(t)
	mustOK(t, other, newAccount("a"))
	if _, err := other.KeyByHash(hash); err != nil {
		t.Fatal(err)
	}
	if err := other.Restore(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if _, err := other.KeyByHash(hash); !errors.Is(err, ErrNotFound) {
		t.Fatalf("key revoked in the snapshot still found after restore: %v", err)
	}
}

func TestAuthCacheDropsReadsThatRacedAnInvalidation(t *testing.T) {
	c := newAuthCache()
	gen := c.generation()
	c.invalidate() // an entry changed keys while the read was under way
	c.putKey(gen, []byte("h"), &raftv1.Key{Id: "stale"})
	if _, ok := c.key([]byte("h")); ok {
		t.Fatal("a read older than the invalidation was cached")
	}
	c.putKey(c.generation(), []byte("h"), &raftv1.Key{Id: "fresh"})
	if k, ok := c.key([]byte("h")); !ok || k.GetId() != "fresh" {
		t.Fatal("a current read was not cached")
	}
}
