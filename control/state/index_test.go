package state

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestAppliedIndexAndReplay(t *testing.T) {
	dir := t.TempDir()
	s := openStoreAt(t, dir)
	if got := s.AppliedIndex(); got != 0 {
		t.Fatalf("fresh store: applied index %d", got)
	}
	cmds := mixedCommands()
	s.ApplyBatch(entries(10, cmds...)) // raft indexes need not start at 1
	last := uint64(10 + len(cmds) - 1)
	if got := s.AppliedIndex(); got != last {
		t.Fatalf("applied index %d, want %d", got, last)
	}
	want := dump(t, s)

	for _, tc := range []struct {
		name    string
		entries []Entry
	}{
		{"whole batch again", entries(10, cmds...)},
		{"last entry only", entries(last, newAccount("late"))},
		{"different commands at old indexes", entries(1, newAccount("x"), newAccount("y"), revokeKey("a1", "mk"))},
	} {
		res := s.ApplyBatch(tc.entries)
		if len(res) != len(tc.entries) {
			t.Fatalf("%s: %d results for %d entries", tc.name, len(res), len(tc.entries))
		}
		for i, r := range res {
			if r != nil {
				t.Errorf("%s: entry %d: result %v, want nil", tc.name, i, r)
			}
		}
		if !bytes.Equal(dump(t, s), want) {
			t.Errorf("%s: replay changed the state", tc.name)
		}
	}

	// A batch straddling the applied index applies only the new part.
	res := s.ApplyBatch(entries(last, newAccount("old"), newAccount("new")))
	if res[0] != nil || res[1].GetStatus() != raftv1.Status_STATUS_OK || s.AppliedIndex() != last+1 {
		t.Fatalf("straddling batch: results %v, applied %d", res, s.AppliedIndex())
	}
	if _, err := s.Account("old"); !errors.Is(err, ErrNotFound) {
		t.Errorf("account from a replayed entry: %v", err)
	}
	want = dump(t, s)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStoreAt(t, dir)
	if got := s.AppliedIndex(); got != last+1 {
		t.Fatalf("reopened: applied index %d, want %d", got, last+1)
	}
	if !bytes.Equal(dump(t, s), want) {
		t.Fatal("reopened: state differs")
	}
	if _, err := s.Account("new"); err != nil {
		t.Fatalf("reopened: %v", err)
	}
	// The restart replays the log from the beginning: nothing changes.
	s.ApplyBatch(entries(10, cmds...))
	if !bytes.Equal(dump(t, s), want) {
		t.Fatal("reopened: replay changed the state")
	}
}

func TestDeterminism(t *testing.T) {
	cmds := append(mixedCommands(), mixedCommands()...) // the second round mostly conflicts
	stores := map[string][]byte{}
	for _, how := range []string{"batch", "batch again", "one by one"} {
		s := openStore(t)
		if how == "one by one" {
			for _, c := range cmds {
				apply(t, s, c)
			}
		} else {
			apply(t, s, cmds...)
		}
		stores[how] = dump(t, s)
	}
	if !bytes.Equal(stores["batch"], stores["batch again"]) {
		t.Error("two stores applying the same batch differ")
	}
	if !bytes.Equal(stores["batch"], stores["one by one"]) {
		t.Error("applying in one batch and entry by entry differ")
	}
}

func TestWaitApplied(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitApplied(ctx, 1); err != nil {
		t.Fatalf("already applied: %v", err)
	}

	done := make(chan error, 1)
	go func() { done <- s.WaitApplied(ctx, 3) }()
	apply(t, s, newAccount("b")) // index 2: not enough
	select {
	case err := <-done:
		t.Fatalf("returned at index 2: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	apply(t, s, newAccount("c"), newAccount("d")) // indexes 3, 4
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wait: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitApplied did not return after index 3 was applied")
	}

	short, cancelShort := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancelShort()
	if err := s.WaitApplied(short, 100); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: err %v, want DeadlineExceeded", err)
	}
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if err := s.WaitApplied(cancelled, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v, want Canceled", err)
	}
}

func TestUnknownCommandVersionPanics(t *testing.T) {
	s := openStore(t)
	mustOK(t, s, newAccount("a"))
	want := dump(t, s)
	for _, v := range []uint32{0, 2, 99} {
		c := newAccount("b")
		c.Version = v
		// The bad entry comes after a good one in the same batch: neither
		// may be applied.
		requirePanic(t, "version", func() { s.ApplyBatch(entries(2, newAccount("c"), c)) })
		if !bytes.Equal(dump(t, s), want) || s.AppliedIndex() != 1 {
			t.Fatalf("version %d: state changed by a panicking batch (applied %d)", v, s.AppliedIndex())
		}
	}
	// The store is still usable.
	mustOK(t, s, newAccount("c"))
}
