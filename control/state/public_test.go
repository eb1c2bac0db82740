package state

import (
	"errors"
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func setBadgeKey(acct, key string, ifNone bool) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_SetBadgeKey{SetBadgeKey: &raftv1.SetBadgeKey{AccountId: acct, BadgeKey: key, IfNone: ifNone}}})
}

func putStatusPage(acct, slug string, enabled bool, m *raftv1.StatusPageMatch) *raftv1.Command {
	return cmd(&raftv1.Command{Op: &raftv1.Command_PutStatusPage{PutStatusPage: &raftv1.PutStatusPage{
		AccountId: acct, Enabled: enabled, Slug: slug, Title: "Status of " + acct, Match: m}}})
}

// statusPageWorstCase replaces a page (its old slug deleted) with the
// longest slug, title and match the bounds allow.
func statusPageWorstCase() worstCase {
	full := func(slug string, n, each int) *raftv1.Command {
		m := &raftv1.StatusPageMatch{}
		for range n {
			m.Tags = append(m.Tags, long(each))
		}
		c := putStatusPage("a", slug, true, m)
		c.GetPutStatusPage().Title = wide(100)
		return c
	}
	return worstCase{
		setup: func(t *testing.T, s *Store) { mustOK(t, s, putStatusPage("a", long(MaxKeyPartBytes-1)+"1", true, nil)) },
		worst: func(*testing.T, *Store) *raftv1.Command {
			return full(long(MaxKeyPartBytes), MaxStatusPageMatch, (MaxCommandBytes-4096)/MaxStatusPageMatch-2)
		},
		want: raftv1.Status_STATUS_OK,
		over: full("s", MaxStatusPageMatch+1, 1),
	}
}

func TestBadgeKeys(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	gen := s.PublicGeneration()
	mustOK(t, s, setBadgeKey("a", "bk_one", true))
	if s.PublicGeneration() == gen {
		t.Fatal("a new badge key did not move the public generation")
	}
	// if_none keeps a key the account has.
	mustOK(t, s, setBadgeKey("a", "bk_other", true))
	if a, err := s.AccountByBadgeKey("bk_one"); err != nil || a.GetId() != "a" || a.GetBadgeKey() != "bk_one" {
		t.Fatalf("by key: %v %v", a, err)
	}
	if _, err := s.AccountByBadgeKey("bk_other"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an if_none key replaced the account's: %v", err)
	}
	// Regenerated: the old key is gone at once.
	mustOK(t, s, setBadgeKey("a", "bk_two", false))
	if _, err := s.AccountByBadgeKey("bk_one"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the old key still works: %v", err)
	}
	if a, err := s.Account("a"); err != nil || a.GetBadgeKey() != "bk_two" {
		t.Fatalf("account: %v %v", a, err)
	}
	if r := apply(t, s, setBadgeKey("b", "bk_two", false))[0]; r.GetStatus() != raftv1.Status_STATUS_CONFLICT {
		t.Fatalf("another account's key: %v", r)
	}
	if r := apply(t, s, setBadgeKey("nobody", "bk_x", false))[0]; r.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("unknown account: %v", r)
	}
}

func TestStatusPages(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"), newAccount("b"))
	gen := s.PublicGeneration()
	mustOK(t, s, putStatusPage("a", "acme", true, &raftv1.StatusPageMatch{Tags: []string{"prod"}}))
	if s.PublicGeneration() == gen {
		t.Fatal("a status page did not move the public generation")
	}
	acct, page, err := s.StatusPageBySlug("acme")
	if err != nil || acct != "a" || !page.GetEnabled() || page.GetMatch().GetTags()[0] != "prod" || page.GetUpdatedUnixMs() != t0 {
		t.Fatalf("by slug: %s %v %v", acct, page, err)
	}
	// Slugs are unique across accounts.
	if r := apply(t, s, putStatusPage("b", "acme", true, nil))[0]; r.GetStatus() != raftv1.Status_STATUS_CONFLICT || r.GetCode() != CodeSlugTaken {
		t.Fatalf("a taken slug: %v", r)
	}
	// A new slug frees the old one; a disabled page keeps its slug.
	mustOK(t, s, putStatusPage("a", "acme-status", false, nil))
	if _, _, err := s.StatusPageBySlug("acme"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the old slug: %v", err)
	}
	mustOK(t, s, putStatusPage("b", "acme", true, nil))
	if r := apply(t, s, putStatusPage("b", "acme-status", true, nil))[0]; r.GetCode() != CodeSlugTaken {
		t.Fatalf("a disabled page's slug: %v", r)
	}
	if p, err := s.StatusPage("a"); err != nil || p.GetEnabled() || p.GetSlug() != "acme-status" {
		t.Fatalf("a's page: %v %v", p, err)
	}
	if _, err := s.StatusPage("nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no page: %v", err)
	}
}
