package pingwire

import (
	"testing"
	"time"

	raftv1 "lookout/internal/gen/lookout/raft/v1"
)

func TestLimitersEvictIdleFullBuckets(t *testing.T) {
	l := NewLimiters(LimiterOptions{Idle: time.Minute})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fast := &raftv1.Plan{}                                           // 10/s, burst 20
	slow := &raftv1.Plan{IngestRatePerSecond: 0.001, IngestBurst: 1} // a token per 1000 s
	for _, id := range []string{"a", "b"} {
		if ok, _ := l.Allow(id, fast, t0); !ok {
			t.Fatal("first ping refused")
		}
	}
	if ok, _ := l.Allow("slow", slow, t0); !ok {
		t.Fatal("first ping refused")
	}
	// b stays busy; a and slow go idle.
	if ok, _ := l.Allow("b", fast, t0.Add(50*time.Second)); !ok {
		t.Fatal("ping refused")
	}
	if ok, _ := l.Allow("b", fast, t0.Add(90*time.Second)); !ok {
		t.Fatal("ping refused")
	}
	// a was idle and full again: dropped. slow was idle but its bucket is
	// not full yet: kept, so eviction never hands out extra tokens.
	if n := l.Size(); n != 2 {
		t.Fatalf("%d buckets, want 2 (b and slow)", n)
	}
	if ok, wait := l.Allow("slow", slow, t0.Add(90*time.Second)); ok || wait <= 0 {
		t.Fatalf("slow key allowed (%v, %v) before its token came back", ok, wait)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1001 * time.Millisecond, 2}, {10 * time.Second, 10}} {
		if got := RetryAfter(tc.d); got != tc.want {
			t.Errorf("RetryAfter(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}
