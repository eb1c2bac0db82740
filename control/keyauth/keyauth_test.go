package keyauth

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"lookout/control/state"
	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers []string // Authorization values; nil: none
		token   string
		present bool
		bad     bool
	}{
		{name: "absent"},
		{name: "bearer", headers: []string{"Bearer mk_x"}, token: "mk_x", present: true},
		{name: "lower case", headers: []string{"bearer mk_x"}, token: "mk_x", present: true},
		{name: "upper case", headers: []string{"BEARER mk_x"}, token: "mk_x", present: true},
		{name: "repeated", headers: []string{"Bearer mk_x", "Bearer mk_x"}, present: true, bad: true},
		{name: "other scheme", headers: []string{"Basic mk_x"}, present: true, bad: true},
		{name: "no token", headers: []string{"Bearer "}, present: true, bad: true},
		{name: "no scheme", headers: []string{"mk_x"}, present: true, bad: true},
		{name: "two spaces", headers: []string{"Bearer  mk_x"}, present: true, bad: true},
		{name: "empty", headers: []string{""}, present: true, bad: true},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, v := range tc.headers {
			r.Header.Add("Authorization", v)
		}
		token, present, err := BearerToken(r)
		if token != tc.token || present != tc.present || (err != nil) != tc.bad || (err != nil && !errors.Is(err, ErrMalformed)) {
			t.Errorf("%s: %q %v %v", tc.name, token, present, err)
		}
	}
}

// lateState knows a key once the reader has caught up.
type lateState struct {
	mu     sync.Mutex
	caught bool
	reads  int
}

func (s *lateState) KeyByHash(hash []byte) (*raftv1.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if string(hash) == "known" || (string(hash) == "late" && s.caught) {
		return &raftv1.Key{Id: string(hash)}, nil
	}
	return nil, fmt.Errorf("key: %w", state.ErrNotFound)
}

// gateReader is a ConsistentRead that blocks until released, then catches
// the state up (or fails with err).
type gateReader struct {
	st      *lateState
	started chan struct{}
	release chan struct{}
	err     error
}

func (g *gateReader) ConsistentRead(ctx context.Context) error {
	g.started <- struct{}{}
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	if g.err != nil {
		return g.err
	}
	g.st.mu.Lock()
	g.st.caught = true
	g.st.mu.Unlock()
	return nil
}

func newGate(st *lateState) *gateReader {
	return &gateReader{st: st, started: make(chan struct{}, 100), release: make(chan struct{})}
}

func TestKeysChecksAMissWithTheLeader(t *testing.T) {
	st := &lateState{}
	g := newGate(st)
	close(g.release)
	k := New(st, g, time.Minute)
	ctx := context.Background()
	if key, err := k.ByHash(ctx, []byte("known")); err != nil || key.GetId() != "known" || k.Rounds() != 0 {
		t.Fatalf("known key: %v %v, %d rounds", key, err, k.Rounds())
	}
	if key, err := k.ByHash(ctx, []byte("late")); err != nil || key.GetId() != "late" || k.Rounds() != 1 {
		t.Fatalf("key created on the leader: %v %v, %d rounds", key, err, k.Rounds())
	}
	if _, err := k.ByHash(ctx, []byte("bad")); !errors.Is(err, state.ErrNotFound) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestKeysUnavailable(t *testing.T) {
	st := &lateState{}
	g := newGate(st)
	g.err = errors.New("no leader")
	close(g.release)
	k := New(st, g, time.Minute)
	if _, err := k.ByHash(context.Background(), []byte("late")); !errors.Is(err, ErrUnavailable) || errors.Is(err, state.ErrNotFound) {
		t.Fatalf("leader unreachable: %v", err)
	}
	// A caller that gives up waiting is unavailable too.
	g2 := newGate(st)
	k = New(st, g2, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := k.ByHash(ctx, []byte("late")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("canceled: %v", err)
	}
	close(g2.release)
}

// TestKeysCoalesceMisses: while one consistent read is in flight, every
// miss that arrives waits for one next read; there are never two in flight.
func TestKeysCoalesceMisses(t *testing.T) {
	st := &lateState{}
	g := newGate(st)
	k := New(st, g, time.Minute)
	ctx := context.Background()
	first := make(chan error, 1)
	go func() {
		_, err := k.ByHash(ctx, []byte("bad-first"))
		first <- err
	}()
	<-g.started // round 1 is in flight
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := k.ByHash(ctx, fmt.Appendf(nil, "bad-%d", i))
			errs <- err
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		k.mu.Lock()
		waiting := 0
		if k.next != nil {
			waiting = k.next.waiters
		}
		k.mu.Unlock()
		if waiting == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d misses wait for the next round", waiting, n)
		}
		time.Sleep(time.Millisecond)
	}
	if k.Rounds() != 1 {
		t.Fatalf("%d rounds in flight, want 1", k.Rounds())
	}
	close(g.release) // round 1 ends, round 2 runs for all of them at once
	if err := <-first; !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("first miss: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, state.ErrNotFound) {
			t.Fatalf("miss: %v", err)
		}
	}
	if k.Rounds() != 2 {
		t.Fatalf("%d consistent reads for %d misses, want 2", k.Rounds(), n+1)
	}
}
