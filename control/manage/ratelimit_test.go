package manage

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"
)

// Requests without a valid key from ever new addresses do not grow the
// limiter past its cap; the keys' buckets are a map of their own.
func TestAddressLimiterIsCapped(t *testing.T) {
	ls := newLimiters(nil)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxAddrBuckets + 500 {
		take(httptest.NewRecorder(), ls.addrs, fmt.Sprintf("198.%d.%d.%d", i>>16&255, i>>8&255, i&255), now)
	}
	if n := ls.addrs.Len(); n != maxAddrBuckets {
		t.Fatalf("%d address buckets, cap %d", n, maxAddrBuckets)
	}
	if !take(httptest.NewRecorder(), ls.keys, "key-1", now) || ls.keys.Len() != 1 {
		t.Fatal("a key's bucket was not made while the addresses are at their cap")
	}
}
