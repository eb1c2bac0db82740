package ratelimit

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestTakeSpendsAndRefills(t *testing.T) {
	b := New(Options{})
	r := Rate{PerSecond: 1, Burst: 2}
	for i := range 2 {
		if res := b.Take("k", r, t0); !res.OK || res.Remaining != float64(1-i) {
			t.Fatalf("take %d: %+v", i, res)
		}
	}
	res := b.Take("k", r, t0)
	if res.OK || res.Wait != time.Second || res.Full != 2*time.Second {
		t.Fatalf("empty bucket: %+v", res)
	}
	if res := b.Take("k", r, t0.Add(time.Second)); !res.OK {
		t.Fatalf("after a second: %+v", res)
	}
	// A clock step back earns nothing.
	if res := b.Take("k", r, t0); res.OK {
		t.Fatalf("clock back: %+v", res)
	}
}

// A bucket whose rate changes (a plan changed) keeps its tokens, up to the
// new burst.
func TestTakeResizeKeepsTokens(t *testing.T) {
	b := New(Options{})
	for range 10 {
		b.Take("k", Rate{PerSecond: 1, Burst: 20}, t0)
	}
	if res := b.Take("k", Rate{PerSecond: 1, Burst: 5}, t0); !res.OK || res.Remaining != 4 {
		t.Fatalf("smaller burst: %+v", res)
	}
	if res := b.Take("k", Rate{PerSecond: 1, Burst: 50}, t0); !res.OK || res.Remaining != 3 {
		t.Fatalf("larger burst: %+v", res)
	}
}

func TestSweepDropsFullBucketsOnly(t *testing.T) {
	b := New(Options{SweepEvery: time.Minute})
	fast := Rate{PerSecond: 10, Burst: 20}
	slow := Rate{PerSecond: 0.001, Burst: 1} // a token per 1000 s
	b.Take("a", fast, t0)
	b.Take("b", fast, t0)
	b.Take("slow", slow, t0)
	b.Take("b", fast, t0.Add(50*time.Second))
	b.Take("b", fast, t0.Add(90*time.Second)) // sweeps: a is full again
	if n := b.Len(); n != 2 {
		t.Fatalf("%d buckets, want 2 (b and slow)", n)
	}
	// slow was not full: kept, so the sweep handed out no token.
	if res := b.Take("slow", slow, t0.Add(90*time.Second)); res.OK || res.Wait <= 0 {
		t.Fatalf("slow key: %+v before its token came back", res)
	}
}

// At the cap a new key shares the overflow bucket; the buckets held are
// never evicted, so making many keys does not reset one's own bucket.
func TestCapSharesOverflowAndKeepsLiveBuckets(t *testing.T) {
	reg := prometheus.NewRegistry()
	met := NewMetrics(reg)
	b := New(Options{Name: "test", MaxKeys: 3, Metrics: met})
	r := Rate{PerSecond: 0.01, Burst: 2}
	for _, k := range []string{"a", "b", "c"} {
		b.Take(k, r, t0)
		b.Take(k, r, t0)
	}
	// The attacker ("a") makes many new keys: they share one bucket.
	for i, k := range []string{"x1", "x2", "x3"} {
		res := b.Take(k, r, t0.Add(time.Duration(i)*2*time.Second))
		if !res.Shared || res.OK != (i < 2) {
			t.Fatalf("new key %s at the cap: %+v", k, res)
		}
	}
	if b.Len() != 3 {
		t.Fatalf("%d keys, want the cap, 3", b.Len())
	}
	// a's bucket was not reset.
	if res := b.Take("a", r, t0.Add(5*time.Second)); res.OK || res.Shared {
		t.Fatalf("a after the flood: %+v", res)
	}
	// Once a bucket is full again it is as good as new: a new key may
	// take its place.
	later := t0.Add(1000 * time.Second)
	if res := b.Take("y", r, later); !res.OK || res.Shared {
		t.Fatalf("new key after the buckets refilled: %+v", res)
	}
	if got := testutil.ToFloat64(met.overflow.WithLabelValues("test")); got != 3 {
		t.Errorf("overflow_total %v, want 3", got)
	}
	if got := testutil.ToFloat64(met.refused.WithLabelValues("test")); got != 2 {
		t.Errorf("refused_total %v, want 2", got)
	}
	if got := testutil.ToFloat64(met.keys.WithLabelValues("test")); got != float64(b.Len()) {
		t.Errorf("keys %v, want %d", got, b.Len())
	}
	if got := testutil.ToFloat64(met.swept.WithLabelValues("test")); got != 3 {
		t.Errorf("swept_total %v, want 3", got)
	}
}

func TestWaitAndRefund(t *testing.T) {
	b := New(Options{})
	r := Rate{PerSecond: 0.5, Burst: 1}
	if w := b.Wait("k", t0); w != 0 {
		t.Fatalf("unknown key waits %v", w)
	}
	if b.Len() != 0 {
		t.Fatal("Wait made a bucket")
	}
	b.Take("k", r, t0)
	if w := b.Wait("k", t0); w != 2*time.Second {
		t.Fatalf("wait %v, want 2s", w)
	}
	b.Refund("k", t0)
	b.Refund("k", t0) // never above the burst
	if res := b.Take("k", r, t0); !res.OK || res.Remaining != 0 {
		t.Fatalf("after refunds: %+v", res)
	}
}
