package state

import (
	"testing"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestSetPassword(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustOK(t, s, newAccount("a"))
	if _, err := s.Account("a"); err != nil { // cached before the change
		t.Fatal(err)
	}
	mustOK(t, s, setPassword("a", []byte("hash-1")))
	if a, _ := s.Account("a"); string(a.GetPasswordHash()) != "hash-1" {
		t.Fatalf("cached account has hash %q, want hash-1", a.GetPasswordHash())
	}
	if a, _ := s.AccountByEmail("A@example.com"); string(a.GetPasswordHash()) != "hash-1" || a.GetPlan() == nil {
		t.Fatalf("by e-mail: %v", a)
	}
	mustOK(t, s, setPassword("a", nil))
	if a, _ := s.Account("a"); len(a.GetPasswordHash()) != 0 {
		t.Fatalf("hash %q after removal", a.GetPasswordHash())
	}
	if res := apply(t, s, setPassword("nobody", []byte("x")))[0]; res.GetStatus() != raftv1.Status_STATUS_NOT_FOUND {
		t.Fatalf("unknown account: %v", res.GetStatus())
	}
}
