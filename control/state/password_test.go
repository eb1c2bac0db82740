package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

// SetPassword sets the password of the account's first owner (the user
// with the account's e-mail), seen at once through the cached reads.
func TestSetPassword(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustOK(t, s, newAccount("a"))
	if _, err := s.User("a", "a"); err != nil { // cached before the change
		t.Fatal(err)
	}
	mustOK(t, s, setPassword("a", []byte("hash-1")))
	if u, _ := s.User("a", "a"); string(u.GetPasswordHash()) != "hash-1" {
		t.Fatalf("cached owner has hash %q, want hash-1", u.GetPasswordHash())
	}
	if u, _ := s.UserByEmail("A@example.com"); string(u.GetPasswordHash()) != "hash-1" || u.GetRole() != RoleOwner {
		t.Fatalf("by e-mail: %v", u)
	}
	mustOK(t, s, setPassword("a", nil))
	if u, _ := s.User("a", "a"); len(u.GetPasswordHash()) != 0 {
		t.Fatalf("hash %q after removal", u.GetPasswordHash())
	}
	if res := apply(t, s, setPassword("nobody", []byte("x")))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("unknown account: %v", res.GetStatus())
	}
	// Once the account's e-mail has no user, there is nobody to set it for.
	mustOK(t, s, addUser("a", "o2", "o2@example.com", RoleOwner), removeUser("a", "a"))
	if res := apply(t, s, setPassword("a", []byte("x")))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("no user with the account's e-mail: %v", res.GetStatus())
	}
}
