package audit

import (
	"context"
	"testing"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestStamp(t *testing.T) {
	user := User("u1", "ann@example.com")
	ctx := WithActor(context.Background(), user)
	if c := Stamp(ctx, &raftv1.Command{}); c.GetActor() != user {
		t.Fatalf("stamped %v, want the context's", c.GetActor())
	}
	own := Operator()
	if c := Stamp(ctx, &raftv1.Command{Actor: own}); c.GetActor() != own {
		t.Fatalf("stamped %v over the command's own", c.GetActor())
	}
	if c := Stamp(context.Background(), &raftv1.Command{}); c.GetActor() != nil {
		t.Fatalf("stamped %v without one in the context", c.GetActor())
	}
	k := Key(&raftv1.Key{Id: "k1", Name: "ci", Hash: []byte("secret hash")})
	if k.GetType() != state.ActorKey || k.GetId() != "k1" || k.GetName() != "ci" {
		t.Fatalf("key actor %v", k)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	p := state.AuditPos{Index: 1 << 40, Position: 7}
	got, ok := ParseCursor(Cursor(p))
	if !ok || got != p {
		t.Fatalf("%v %v, want %v", got, ok, p)
	}
	for _, bad := range []string{"", "AAAA", "!!!!!!!!!!!!!!!!"} {
		if _, ok := ParseCursor(bad); ok {
			t.Errorf("%q read as a cursor", bad)
		}
	}
}
